"""What an ingest asks of the collection it writes (flows/sync.py, flows/steps.py, flows/discovery.py): the store
protocol that MilvusStore (index/store.py) and InMemoryStore (index/memory.py) both meet."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from cairn.index.ledger import IndexedDocument
from cairn.schemas.config import MilvusConfig
from cairn.schemas.fields import Row


class IndexStore(Protocol):
    """The rows of one collection as an ingest writes them: upserts by chunk_id, versions and documents taken
    out of service (deleted, or with history marked superseded), and the ledger read back from the rows."""

    config: MilvusConfig  # write_batch_rows: how many rows an upsert call carries

    def upsert(self, rows: list[Row]) -> int:
        """Write rows, each replacing any row with its chunk_id; how many were written."""
        ...

    def retire_other_versions(self, document_id: str, keep_version: str, history: bool, at: int) -> int:
        """Take every current row of the document that is not `keep_version` out of service: delete it, or with
        history mark it superseded (is_current false, temporal_end = `at` if earlier)."""
        ...

    def retire_documents(self, document_ids: Iterable[str], history: bool, at: int) -> None:
        """Take every current row of these documents out of service, as retire_other_versions does."""
        ...

    def delete_chunks(self, chunk_ids: Iterable[str]) -> None:
        """Delete these rows, current or not."""
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
