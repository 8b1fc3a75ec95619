"""A collection held in a dict: the store protocol (index/protocol.py) without Milvus, for tests of the sync
logic. A real implementation with MilvusStore's semantics (tests/integration/test_index_memory.py runs the
same writes on both and compares), not a mock: upserts replace by chunk_id, retiring by chunk_id deletes or
with history marks superseded, and the ledger is computed by the same code (index/ledger.py read_ledger).
Nothing persists."""

from __future__ import annotations

from collections.abc import Iterable

from cairn.index.ledger import IndexedDocument, LedgerEntry, read_ledger
from cairn.schemas.config import MilvusConfig
from cairn.schemas.fields import Row


class Refused(Exception):
    """What InMemoryStore raises for rows of a document it was built to refuse: a request the store turns down,
    as a Milvus server does (nothing of it lands), not a fault of the data."""


class InMemoryStore:
    """Rows keyed by chunk_id. `refuse`: document ids whose rows every upsert is refused for."""

    def __init__(self, config: MilvusConfig | None = None, refuse: Iterable[str] = ()) -> None:
        self.config = config or MilvusConfig()
        self.rows: dict[str, Row] = {}
        self.refuse = frozenset(refuse)
        self.writes = 0  # calls that changed rows: the mark

    def upsert(self, rows: list[Row]) -> int:
        refused = sorted({row["document_id"] for row in rows} & self.refuse)
        if refused:
            raise Refused(f"rows of document(s) {', '.join(refused)} refused (InMemoryStore refuse=...)")
        self.writes += 1
        for row in rows:
            self.rows[row["chunk_id"]] = dict(row)
        return len(rows)

    def retire_chunks(self, chunk_ids: Iterable[str], history: bool, at: int) -> None:
        if not history:
            self.delete_chunks(chunk_ids)
            return
        self.writes += 1
        for chunk_id in chunk_ids:  # one dict: no reader sees a half-done call, so no order to keep
            row = self.rows.get(chunk_id)
            if row is not None:
                row["is_current"] = False
                row["temporal_end"] = min(int(row["temporal_end"]), at)

    def delete_chunks(self, chunk_ids: Iterable[str]) -> None:
        self.writes += 1
        for chunk_id in chunk_ids:
            self.rows.pop(chunk_id, None)

    def flush(self) -> None:
        pass  # nothing is buffered

    def settle(self) -> None:
        pass

    def ledger(self, source_name: str) -> dict[str, IndexedDocument]:
        return read_ledger(
            LedgerEntry.of(row) for row in self.rows.values() if row["source_name"] == source_name and row["is_current"]
        )

    def mark(self) -> str | None:
        return str(self.writes)
