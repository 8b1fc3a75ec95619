"""The search legs' reads (query/search.py, issue #52): a keyword-only candidate's cosine comes from the vector its
BM25 hit carried, with no second read of the index by id; a reader that returns no vector on a hit is read by id,
and the cosines are the same either way."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from cairn.index.memory import InMemoryStore
from cairn.query.search import Search, cosine
from cairn.schemas.config import QueryConfig
from cairn.schemas.row_filter import RowFilter
from cairn.schemas.rows import ChunkRow, ScoredRow
from tests.encoders import HashingEncoder
from tests.query_corpus import corpus_rows

QUESTION = "runbook kept short on purpose"  # its BM25 leg finds a child its dense leg (top 2) does not
WHERE = RowFilter.access("acme", ("sre", "payments")).narrowed(chunk_type="child")


class CountingStore(InMemoryStore):
    """The in-memory reader, counting its reads by id."""

    def __init__(self) -> None:
        super().__init__()
        self.reads_by_id: list[list[str]] = []

    def rows(self, chunk_ids: list[str], fields: list[str] | None = None) -> list[ChunkRow]:
        self.reads_by_id.append(list(chunk_ids))
        return super().rows(chunk_ids) if fields is None else super().rows(chunk_ids, fields)


class VectorlessHits(CountingStore):
    """A reader whose BM25 hits carry no vector (as one asked for other fields would)."""

    def search_bm25(self, text: str, where: RowFilter, limit: int, fields: list[str] | None = None) -> list[ScoredRow]:
        hits = super().search_bm25(text, where, limit, fields)
        return [ScoredRow(replace(h.row, full_text_embedding=None), h.score) for h in hits]


def legs(store: CountingStore, limit: int):
    store.upsert(list(ROWS))
    encoder = HashingEncoder()
    vector = encoder.encode_queries([QUESTION])[0].tolist()
    found = Search(store, QueryConfig(), encoder.identity).legs(QUESTION, [vector], WHERE, limit)
    dense = {c.chunk_id for c in found.dense}
    keyword_only = [c for c in found.candidates if c.chunk_id not in dense]
    return found, keyword_only, vector


ROWS: list[ChunkRow] = []


@pytest.fixture(autouse=True)
def rows(tmp_path: Path) -> None:
    ROWS[:] = corpus_rows(tmp_path)


def test_keyword_only_candidates_get_their_cosine_without_a_read_by_id():
    store = CountingStore()
    found, keyword_only, vector = legs(store, limit=2)
    assert keyword_only, "the corpus must give the BM25 leg a candidate the dense leg did not find"
    assert store.reads_by_id == []
    by_id = {r.chunk_id: r for r in ROWS}
    search = Search(store, QueryConfig(), HashingEncoder().identity)
    for c in keyword_only:
        raw = cosine(by_id[c.chunk_id].full_text_embedding, vector)
        assert c.vector == pytest.approx(search.relevance(raw)) and c.distance == pytest.approx(1.0 - raw)


def test_hits_without_a_vector_are_read_by_id_to_the_same_cosines():
    carried = {c.chunk_id: (c.vector, c.distance) for c in legs(CountingStore(), limit=2)[1]}
    store = VectorlessHits()
    _, keyword_only, _ = legs(store, limit=2)
    assert len(store.reads_by_id) == 1 and set(store.reads_by_id[0]) == set(carried)
    assert {c.chunk_id for c in keyword_only} == set(carried)
    for c in keyword_only:
        assert (c.vector, c.distance) == pytest.approx(carried[c.chunk_id])
