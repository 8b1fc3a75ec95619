"""A collection held in a dict: both halves of the store (index/protocol.py) without Milvus, for tests of the sync
logic and of the whole query pipeline in milliseconds. A real implementation with Milvus's semantics, not a mock:
upserts replace by chunk_id, retiring by chunk_id deletes or with history marks superseded, the ledger is computed
by the same code (index/ledger.py read_ledger), dense search is brute-force cosine and BM25 is scored here over the
same text Milvus ranks (`search_text`). tests/integration/test_index_memory.py runs the same writes and the same
questions on both and compares what both engines must agree on. Nothing persists.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import replace

import numpy as np

from cairn.index.ledger import IndexedDocument, LedgerEntry, read_ledger
from cairn.schemas.collection import OUTPUT_FIELDS, analyzed
from cairn.schemas.config import MilvusConfig
from cairn.schemas.row_filter import RowFilter
from cairn.schemas.rows import ChunkRow, ScoredRow

# Milvus's BM25 function with its default analyzer (schemas/collection.py analyzed): k1 = 1.2, b = 0.75.
K1, B = 1.2, 0.75


class Refused(Exception):
    """What InMemoryStore raises for rows of a document it was built to refuse: a request the store turns down,
    as a Milvus server does (nothing of it lands), not a fault of the data."""


class InMemoryStore:
    """Rows keyed by chunk_id. `refuse`: document ids whose rows every upsert is refused for."""

    def __init__(self, config: MilvusConfig | None = None, refuse: Iterable[str] = ()) -> None:
        self.config = config or MilvusConfig()
        self.rows_by_id: dict[str, ChunkRow] = {}
        self.refuse = frozenset(refuse)
        self.writes = 0  # calls that changed rows: the mark
        self._terms: dict[str, Counter[str]] = {}  # chunk_id -> its search_text's term counts, for BM25
        self._terms_of: tuple[int, int] = (-1, -1)  # (id of rows_by_id, writes) the term counts were made from

    # ---- the writing half (IndexStore) ------------------------------------------------------------------
    def upsert(self, rows: list[ChunkRow]) -> int:
        refused = sorted({row.document_id for row in rows} & self.refuse)
        if refused:
            raise Refused(f"rows of document(s) {', '.join(refused)} refused (InMemoryStore refuse=...)")
        self.writes += 1
        for row in rows:
            self.rows_by_id[row.chunk_id] = replace(row)
        return len(rows)

    def retire_chunks(self, chunk_ids: Iterable[str], history: bool, at: int) -> None:
        if not history:
            self.delete_chunks(chunk_ids)
            return
        self.writes += 1
        for chunk_id in chunk_ids:  # one dict: no reader sees a half-done call, so no order to keep
            row = self.rows_by_id.get(chunk_id)
            if row is not None:
                row.is_current = False
                row.temporal_end = min(int(row.temporal_end), at)

    def delete_chunks(self, chunk_ids: Iterable[str]) -> None:
        self.writes += 1
        for chunk_id in chunk_ids:
            self.rows_by_id.pop(chunk_id, None)

    def flush(self) -> None:
        pass  # nothing is buffered

    def settle(self) -> None:
        pass

    def ledger(self, source_name: str) -> dict[str, IndexedDocument]:
        return read_ledger(
            LedgerEntry.of(row) for row in self.rows_by_id.values() if row.source_name == source_name and row.is_current
        )

    def mark(self) -> str | None:
        return str(self.writes)

    # ---- the reading half (IndexReader) -----------------------------------------------------------------
    def search_dense(
        self, field: str, vectors: list[list[float]], where: RowFilter, limit: int
    ) -> list[list[ScoredRow]]:
        rows = [row for row in self.rows_by_id.values() if where.admits(row) and getattr(row, field) is not None]
        if not rows:
            return [[] for _ in vectors]
        matrix = np.asarray([getattr(row, field) for row in rows], dtype=np.float32)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        found = []
        for vector in vectors:
            query = np.asarray(vector, dtype=np.float32)
            cosines = matrix @ (query / max(float(np.linalg.norm(query)), 1e-12))
            order = sorted(range(len(rows)), key=lambda i: (-cosines[i], rows[i].chunk_id))[:limit]
            found.append([ScoredRow(_copy(rows[i]), float(cosines[i])) for i in order])
        return found

    def search_bm25(self, text: str, where: RowFilter, limit: int, fields: list[str] | None = None) -> list[ScoredRow]:
        asked = Counter(analyzed(text))  # a word said twice weighs twice, as in Milvus ("renewal term term")
        query = set(asked)
        if (id(self.rows_by_id), self.writes) != self._terms_of:  # written since, or rows put back from a copy
            self._terms = {i: Counter(analyzed(row.search_text)) for i, row in self.rows_by_id.items()}
            self._terms_of = (id(self.rows_by_id), self.writes)
        if not query or not self._terms:
            return []
        lengths = {chunk_id: sum(terms.values()) for chunk_id, terms in self._terms.items()}
        average = sum(lengths.values()) / len(lengths)
        frequency = Counter(term for terms in self._terms.values() for term in query & terms.keys())
        n = len(self._terms)
        idf = {term: math.log(1 + (n - frequency[term] + 0.5) / (frequency[term] + 0.5)) for term in query}
        scored = []
        for chunk_id, terms in self._terms.items():
            row = self.rows_by_id[chunk_id]
            if not query & terms.keys() or not where.admits(row):
                continue
            norm = K1 * (1 - B + B * lengths[chunk_id] / average)
            score = sum(asked[t] * idf[t] * terms[t] * (K1 + 1) / (terms[t] + norm) for t in query if t in terms)
            scored.append(ScoredRow(_copy(row, OUTPUT_FIELDS if fields is None else fields), score))
        scored.sort(key=lambda hit: (-hit.score, hit.row.chunk_id))
        return scored[:limit]

    def rows(self, chunk_ids: list[str], fields: list[str] = OUTPUT_FIELDS) -> list[ChunkRow]:
        return [_copy(self.rows_by_id[i], fields) for i in dict.fromkeys(chunk_ids) if i in self.rows_by_id]

    def any_row(self, where: RowFilter) -> bool:
        return any(where.admits(row) for row in self.rows_by_id.values())

    def count(self, where: RowFilter) -> int:
        return sum(where.admits(row) for row in self.rows_by_id.values())

    def sample(self, where: RowFilter, limit: int, fields: list[str] = OUTPUT_FIELDS) -> list[ChunkRow]:
        return [_copy(row, fields) for row in self.rows_by_id.values() if where.admits(row)][:limit]

    def children_per_document(self, document_ids: set[str], where: RowFilter) -> dict[str, int]:
        counts: Counter[str] = Counter(
            row.document_id
            for row in self.rows_by_id.values()
            if row.document_id in document_ids and not row.is_parent and where.admits(row)
        )
        return dict(counts)

    def neighbours(self, seeds: list[ChunkRow], where: RowFilter) -> list[ChunkRow]:
        wanted = {
            (seed.document_id, seed.version_hash, seed.section_order + step) for seed in seeds for step in (-1, 1)
        }
        return [
            _copy(row)
            for row in self.rows_by_id.values()
            if row.is_parent and (row.document_id, row.version_hash, row.section_order) in wanted and where.admits(row)
        ]

    def iterate(self, filter: str, fields: list[str], batch_size: int = 1000) -> Iterator[ChunkRow]:
        """Every row (the scan's Milvus `filter` is not evaluated here: the ledger reads `ledger()` instead)."""
        if filter:
            raise NotImplementedError("InMemoryStore.iterate evaluates no Milvus expression; use a RowFilter read")
        yield from (_copy(row) for row in self.rows_by_id.values())

    def counts(self) -> Counter[tuple[str, str, str]]:
        return Counter((row.tenant_id, row.source_name, row.chunk_type) for row in self.rows_by_id.values())

    def tenants_and_groups(self, tenant: str | None = None) -> tuple[set[str], set[str]]:
        rows = [row for row in self.rows_by_id.values() if tenant is None or row.tenant_id == tenant]
        return {row.tenant_id for row in rows}, {group for row in rows for group in row.access_control_list}

    def close(self) -> None:
        pass


def _copy(row: ChunkRow, fields: Iterable[str] = OUTPUT_FIELDS) -> ChunkRow:
    """What a read hands out: a copy (a caller cannot change the store), with a vector only when asked for, as
    Milvus returns rows."""
    asked = set(fields)
    return replace(
        row,
        abstract_embedding=row.abstract_embedding if "abstract_embedding" in asked else None,
        full_text_embedding=row.full_text_embedding if "full_text_embedding" in asked else None,
        extra=dict(row.extra),
    )
