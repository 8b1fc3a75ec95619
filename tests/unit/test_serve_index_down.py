"""The service decides "the index is down" (503, the index opened anew next time) with `cairn.errors.index_down`,
the same `fault_of` rule a run's retries and the Retriever's own retry use: not by the type of the exception
(serve/service.py kept a list of three). What the engine raised when it restarted or timed out is the index
being down; a caller's error, data the engine refused and a bug are not."""

from __future__ import annotations

from pathlib import Path

import pytest
from pymilvus.exceptions import MilvusException, ParamError

from cairn.errors import FilterError, NoCollection, RetrievalError, StoreError, index_down
from cairn.index.memory import InMemoryStore
from cairn.query import Principal, Retriever
from cairn.schemas.config import CairnConfig, MilvusConfig, QueryConfig
from cairn.serve.errors import Unavailable
from cairn.serve.service import Question, Service
from tests.encoders import HashingEncoder
from tests.query_corpus import SRE, corpus_rows

DOWN = [
    StoreError("the index is damaged"),
    RetrievalError("cannot be queried"),
    NoCollection("no collection"),
    MilvusException(code=2, message="server restarting"),
    ConnectionError("refused"),
    TimeoutError("deadline"),
]
NOT_DOWN = [
    FilterError("filters: unknown key"),
    ParamError(message="invalid expression"),
    ValueError("a value the engine cannot take"),
    KeyError("a bug"),
]


@pytest.mark.parametrize("exc", DOWN, ids=lambda e: type(e).__name__)
def test_what_the_index_or_the_engine_raised_is_the_index_down(exc):
    assert index_down(exc)


@pytest.mark.parametrize("exc", NOT_DOWN, ids=lambda e: type(e).__name__)
def test_a_callers_error_refused_data_and_a_bug_are_not_the_index_down(exc):
    assert not index_down(exc)


def _service(tmp_path: Path, error: BaseException) -> tuple[Service, Retriever]:
    store = InMemoryStore()
    store.upsert(corpus_rows(tmp_path))

    def failing(*args, **kwargs):
        raise error

    store.search_dense = failing  # the engine fails under every read of the question
    retriever = Retriever(MilvusConfig(), QueryConfig(), HashingEncoder(), client=store)
    config = CairnConfig.model_validate({"state_path": str(tmp_path / "state.sqlite")})
    return Service(config, retriever=retriever, feedback=False), retriever


@pytest.mark.parametrize("exc", [ConnectionError("refused"), MilvusException(code=2, message="restarting")])
def test_a_question_the_engine_failed_is_unavailable_and_the_index_is_opened_anew(tmp_path, exc):
    service, retriever = _service(tmp_path, exc)
    with pytest.raises(Unavailable) as unavailable:
        service._retrieve(Question("how do I fail over the ledger-db primary"), Principal("acme", [SRE]))
    assert unavailable.value.index_down and service._retriever is None


def test_a_bug_under_a_question_is_raised_as_itself_and_the_index_kept(tmp_path):
    service, retriever = _service(tmp_path, KeyError("a bug"))
    with pytest.raises(KeyError):
        service._retrieve(Question("how do I fail over the ledger-db primary"), Principal("acme", [SRE]))
    assert service._retriever is retriever
