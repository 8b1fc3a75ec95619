"""The two halves of the collection as protocols: what an ingest asks of the collection it writes (`IndexStore`:
flows/sync.py, flows/steps.py, flows/discovery.py) and what a question reads of it (`IndexReader`: query/). Milvus
meets them with MilvusStore (index/store.py) and CollectionReader (index/milvus.py); InMemoryStore (index/memory.py)
meets both without Milvus, for tests of the sync and of the whole query pipeline in milliseconds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Protocol

from cairn.index.ledger import IndexedDocument
from cairn.schemas.config import MilvusConfig
from cairn.schemas.row_filter import RowFilter
from cairn.schemas.rows import ChunkRow, ScoredRow


class IndexStore(Protocol):
    """The rows of one collection as an ingest writes them: upserts by chunk_id, rows taken out of service by
    chunk_id (deleted, or with history marked superseded), and the ledger read back from the rows."""

    config: MilvusConfig  # write_batch_rows: how many rows an upsert call carries

    def upsert(self, rows: list[ChunkRow]) -> int:
        """Write rows, each replacing any row with its chunk_id; how many were written."""
        ...

    def retire_chunks(self, chunk_ids: Iterable[str], history: bool, at: int) -> None:
        """Take these rows out of service, by primary key: delete them, or with history mark them superseded
        (is_current false, temporal_end = `at` if earlier), children before parents. The ids are the ledger's
        (IndexedDocument.rows), and that is every current row to retire, never a filter's guess: one writer holds
        the index (the writer slot, flows/concurrency.py) and the ledger was read in the same turn with it, so
        every current row of the source is in the ledger, orphans included; nothing else writes until the turn
        ends."""
        ...

    def delete_chunks(self, chunk_ids: Iterable[str]) -> None:
        """Delete these rows, current or not, by primary key."""
        ...

    def flush(self) -> None:
        """Make what was written durable and visible (a source's end)."""
        ...

    def settle(self) -> None:
        """After each batch written: keep what a store buffers to one batch's worth."""
        ...

    def ledger(self, source_name: str) -> dict[str, IndexedDocument]:
        """document_id -> its current rows, for one source (index/ledger.py read_ledger)."""
        ...

    def mark(self) -> str | None:
        """A value that changes whenever the collection is written, by this writer or another (None: not known,
        so whoever asks reads the ledger again)."""
        ...


class IndexReader(Protocol):
    """The reads a question makes of one collection, every one filtered (`where`: tenant, ACL, time, scope) or by
    primary key (the caller re-checks the ACL of what it got: RowFilter.admits). Scores: a dense leg's cosine, the
    BM25 leg's score, positive."""

    def search_dense(
        self, field: str, vectors: list[list[float]], where: RowFilter, limit: int
    ) -> list[list[ScoredRow]]:
        """Per vector, the nearest child rows on a dense field (`full_text_embedding`, `abstract_embedding`)."""
        ...

    def search_bm25(self, text: str, where: RowFilter, limit: int, fields: list[str] | None = None) -> list[ScoredRow]:
        """The best BM25 matches of the text, each row with at least `fields` (None: what a search leg reads,
        schemas/collection.py SEARCH_FIELDS)."""
        ...

    def rows(self, chunk_ids: list[str], fields: list[str] = ...) -> list[ChunkRow]:
        """Rows by primary key (unknown ids are left out), with the fields asked for."""
        ...

    def any_row(self, where: RowFilter) -> bool: ...

    def count(self, where: RowFilter) -> int:
        """How many rows pass `where`."""
        ...

    def sample(self, where: RowFilter, limit: int, fields: list[str] = ...) -> list[ChunkRow]:
        """Some rows that pass `where` (at most `limit`; which ones is the engine's choice)."""
        ...

    def children_per_document(self, document_ids: set[str], where: RowFilter) -> dict[str, int]:
        """How many child rows each document has that `where` lets through."""
        ...

    def neighbours(self, seeds: list[ChunkRow], where: RowFilter) -> list[ChunkRow]:
        """The parent rows of the sections just before and after each seed's (same document and version)."""
        ...

    def counts(self) -> Counter[tuple[str, str, str]]:
        """Rows per (tenant, source, chunk_type)."""
        ...

    def tenants_and_groups(self, tenant: str | None = None) -> tuple[set[str], set[str]]:
        """The tenants on the rows (or just `tenant`), and every group of their ACLs."""
        ...

    def close(self) -> None: ...
