"""What an ingest asks of the collection it writes (flows/sync.py, flows/steps.py, flows/discovery.py): the store
protocol that MilvusStore (index/store.py) and InMemoryStore (index/memory.py) both meet."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from cairn.index.ledger import IndexedDocument
from cairn.schemas.config import MilvusConfig
from cairn.schemas.fields import Row


class IndexStore(Protocol):
    """The rows of one collection as an ingest writes them: upserts by chunk_id, rows taken out of service by
    chunk_id (deleted, or with history marked superseded), and the ledger read back from the rows."""

    config: MilvusConfig  # write_batch_rows: how many rows an upsert call carries

    def upsert(self, rows: list[Row]) -> int:
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
