"""Rule 11 through Retriever.retrieve on a real index (the two-tenant wiki, bge-small-en-v1.5) with the real
cross-encoder: it reorders a question whose top score is in the band, and only such a question; what it did is
in the diagnostics and the query log record."""

from __future__ import annotations

import json
import logging

import pytest

from cairn.embedding import encoder_for
from cairn.query import Principal, Retriever
from cairn.query.rerank import FLAG
from cairn.query.retriever import connect
from cairn.schemas.config import load_config
from tests.integration import corpus

QUESTION = "what to do when the consumer group lags behind"
SRE = Principal("acme", corpus.ACME_GROUPS)


@pytest.fixture(scope="module")
def ask(tmp_path_factory):
    config = load_config(corpus.index_directly(tmp_path_factory.mktemp("rerank")))
    reader = connect(config.milvus)
    encoder = encoder_for(config.embedding)

    def retrieve(**settings):
        # every candidate ranked once one passes the floors: three sections to put in order, not one
        query = config.query.model_copy(update={"floor_scope": "answer", **settings})
        retriever = Retriever(config.milvus, type(query)(**query.model_dump()), encoder, client=reader)
        return retriever.retrieve(QUESTION, SRE, k=3)

    yield retrieve
    reader.close()


@pytest.mark.slow
def test_the_reranker_reorders_a_borderline_question_and_leaves_any_other_as_fused(ask, caplog):
    plain = ask()
    top = plain.diagnostics["combined_top"]
    assert (plain.diagnostics["rerank_used"], plain.diagnostics["rerank_ms"]) == (False, 0.0)

    with caplog.at_level(logging.INFO, logger="cairn.query"):
        # the model's order alone (the default blend keeps this question's fused order)
        inside = ask(steps={"rerank": True}, rerank_band=(top - 0.01, top + 0.01), rerank_weight=1.0)
    outside = ask(steps={"rerank": True}, rerank_band=(top + 0.01, 1.0))

    assert inside.diagnostics["rerank_used"] and inside.diagnostics["rerank_ms"] > 0
    assert inside.diagnostics["timings_ms"]["rerank"] >= inside.diagnostics["rerank_ms"]
    assert all(FLAG in h.flags for h in inside.hits)
    fused_order, reranked_order = [h.chunk_id for h in plain.hits], [h.chunk_id for h in inside.hits]
    assert reranked_order != fused_order and sorted(reranked_order) == sorted(fused_order)
    record = json.loads(next(r.getMessage() for r in caplog.records if '"event": "query"' in r.getMessage()))
    assert record["rerank_used"] is True and record["rerank_ms"] == inside.diagnostics["rerank_ms"]

    assert (outside.diagnostics["rerank_used"], outside.diagnostics["rerank_ms"]) == (False, 0.0)
    assert [h.to_dict() for h in outside.hits] == [h.to_dict() for h in plain.hits]
