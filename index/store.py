"""The writer of the one collection: create or check it, upsert, retire and delete rows, read its ledger back.
Connecting, loading, encoder checks and reads are the access layer's (index/milvus.py), shared with the query side:
the writer reads through a CollectionReader on its own connection."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import Any

from pymilvus import MilvusClient

from cairn.errors import StoreError
from cairn.index.derived import (
    SCAN_FIELDS,
    UNSEALED,
    DerivedLedger,
    collection_mark,
    new_mark,
    set_collection_mark,
)
from cairn.index.ledger import IndexedDocument, collection_ledger
from cairn.index.milvus import (
    Connection,
    check_encoder,
    collection_exists,
    load_collection,
    quiet_lite_refusals,
)
from cairn.index.reader import CollectionReader
from cairn.schemas.collection import (
    BM25_INPUT,
    DENSE_FIELDS,
    EMBEDDER_PROPERTY,
    OUTPUT_FIELDS,
    build_index_params,
    build_schema,
    schema_mismatch,
)
from cairn.schemas.config import MilvusConfig
from cairn.schemas.rows import ChunkRow

# Everything a row holds but its BM25 vector (Milvus derives that from search_text on every write).
ROW_FIELDS = list(dict.fromkeys([*OUTPUT_FIELDS, "acl_key", BM25_INPUT, *DENSE_FIELDS]))
log = logging.getLogger(__name__)
DELETE_BATCH = 500  # ids per delete call: the expression pymilvus sends names each one


class MilvusStore:
    """The writer of `config.collection`, its vectors `dim` wide, on `connection` (opened, creating a Lite folder,
    when not given); `close` closes the connection.

    With a derived ledger (index/derived.py), every write is recorded in it too and the ledger is read from it
    (rebuilt from the collection first when it is not in step); without one, the ledger is read from the
    collection. Either way the first write clears the collection's mark, so no derived ledger trusts itself
    past a write it did not see."""

    def __init__(
        self, config: MilvusConfig, dim: int, connection: Connection | None = None, derived: DerivedLedger | None = None
    ) -> None:
        self.config = config
        self.dim = dim
        self.collection = config.collection
        self.connection = connection or Connection.open(config, create=True)
        self.reader = CollectionReader(self.connection, config)
        self.derived = derived
        self._writing = False  # the collection's mark was cleared for writes not yet sealed

    @property
    def client(self) -> MilvusClient:
        return self.connection.client

    def exists(self) -> bool:
        return collection_exists(self.client, self.config)

    def ensure_collection(self, embedder: str | None = None) -> None:
        """Create the collection, or check an existing one fits: its schema, and (when `embedder` is given,
        i.e. by writers) the encoder its vectors came from. A collection made before encoders were recorded
        is taken to hold `embedder`'s vectors and is labelled with it."""
        if self.exists():
            self._check_compatible()
            if embedder is not None and check_encoder(self.client, self.collection, embedder) is None:
                self.client.alter_collection_properties(self.collection, properties={EMBEDDER_PROPERTY: embedder})
        else:
            labels = {"properties": {EMBEDDER_PROPERTY: embedder}} if embedder else {}
            with quiet_lite_refusals():
                self.client.create_collection(self.collection, schema=build_schema(self.dim), **labels)
                # sync=False: the collection is empty, so there is nothing to build; pymilvus would otherwise
                # poll each of the 6 indexes every 0.5 s, 3 s of every new collection (cProfile)
                self.client.create_index(
                    self.collection,
                    build_index_params(self.config.hnsw_m, self.config.hnsw_ef_construction),
                    sync=False,
                )
        self.load()

    def load(self) -> None:
        load_collection(self.client, self.config)

    def _check_compatible(self) -> dict[str, Any]:
        described: dict[str, Any] = self.client.describe_collection(self.collection)
        problem = schema_mismatch(self.collection, described, self.dim)
        if problem:
            raise StoreError(
                f"{problem} at {self.config.uri}: use a new [milvus] collection name or drop it and ingest again"
            )
        return described

    # ---- writing -------------------------------------------------------------------------------
    def _begin(self) -> None:
        """Before the first write since the last seal: the derived ledgers of this collection stop trusting
        themselves (their mark and the collection's differ until `seal`)."""
        if self._writing:
            return
        if self.derived is not None:
            self.derived.unseal()
        set_collection_mark(self.client, self.collection, UNSEALED)
        self._writing = True

    def upsert(self, rows: list[ChunkRow]) -> int:
        self._begin()
        size = self.config.write_batch_rows
        for start in range(0, len(rows), size):
            part = rows[start : start + size]
            self.client.upsert(self.collection, [row.to_row() for row in part])
            if self.derived is not None:
                self.derived.record(part)
        return len(rows)

    def retire_chunks(self, chunk_ids: Iterable[str], history: bool, at: int) -> None:
        """Take these rows out of service by primary key: delete them, or with history mark them superseded
        (is_current false, temporal_end = `at` if earlier), children before parents (a reader never meets a
        current child of a retired parent). The ids come from the ledger (IndexedDocument.rows; why that is
        every row to retire: index/protocol.py), never from a filter: on Milvus Lite a filtered delete or query
        scans the whole collection, one by primary key goes straight to the rows. Measured on 20,400 rows
        (Milvus Lite 3.2.2, 2 cores), 10 rows at a time: deleted by ids in 6-11 ms (median), by a filter on
        other fields (the retirement this replaced) in 140-250 ms; read by ids (history) in 15-27 ms, by a
        filter in 140-150 ms. A filter's cost grows with the collection, a primary key's with the rows named."""
        ids = list(dict.fromkeys(chunk_ids))
        if not history:
            self.delete_chunks(ids)
            return
        size = self.config.write_batch_rows
        if len(ids) > size:  # children first across calls too: one light read of every row's kind
            parents = {
                row.chunk_id
                for start in range(0, len(ids), size)
                for row in self.reader.rows(ids[start : start + size], ["chunk_id", "chunk_type"])
                if row.is_parent
            }
            ids.sort(key=lambda chunk_id: chunk_id in parents)
        for start in range(0, len(ids), size):
            rows = self.reader.rows(ids[start : start + size], ROW_FIELDS)
            for row in rows:
                row.is_current = False
                row.temporal_end = min(int(row.temporal_end), at)
            rows.sort(key=lambda row: row.is_parent)
            self.upsert(rows)

    def delete_chunks(self, chunk_ids: Iterable[str]) -> None:
        """Delete these rows, current or not, by primary key (pymilvus `delete(ids=...)`), in batches."""
        ids = list(dict.fromkeys(chunk_ids))
        if not ids:
            return
        self._begin()
        for start in range(0, len(ids), DELETE_BATCH):
            part = ids[start : start + DELETE_BATCH]
            self.client.delete(self.collection, ids=part)
            if self.derived is not None:
                self.derived.forget(part)

    def flush(self) -> None:
        """Make the writes durable; with a derived ledger, seal it: the collection and the file take one new mark
        (the collection first: a process killed between the two leaves them different, so the file is rebuilt)."""
        self.client.flush(self.collection)
        if self._writing and self.derived is not None:
            mark = new_mark()
            set_collection_mark(self.client, self.collection, mark)
            self.derived.seal(mark)
            self._writing = False

    def settle(self) -> None:
        """After each batch an ingest writes. Milvus Lite (in its server process, index/liteserver.py) buffers
        unflushed rows in a memtable (flushed on its own only at 128 MB) that every filtered query scans
        row by row: unflushed, its memory and the time per document grow with the rows written so far
        (bench/rss.py). A server seals segments itself and rate-limits flush calls, and its
        memory is not the ingest's: nothing to do there."""
        if self.config.is_lite:
            self.client.flush(self.collection)

    # ---- reading -------------------------------------------------------------------------------
    def iterate(self, filter: str, fields: list[str], batch_size: int = 1000) -> Iterator[ChunkRow]:
        """Every matching row, paged."""
        return self.reader.iterate(filter, fields, batch_size)

    def ledger(self, source_name: str) -> dict[str, IndexedDocument]:
        """From the derived ledger (brought in step first), else from the collection."""
        if self.derived is None:
            return collection_ledger(self.reader, source_name)
        self.bring_in_step()
        return self.derived.ledger(source_name)

    def mark(self) -> str | None:
        """The collection's mark (index/derived.py): a new one after each writer's flush, cleared by its first
        write; None while a write is unsealed, or without a derived ledger (then the ledger is read again)."""
        if self.derived is None:
            return None
        found = collection_mark(self.client, self.collection)
        return found if found and found != UNSEALED else None

    def bring_in_step(self, force: bool = False) -> bool:
        """Rebuild the derived ledger from the collection when it is not in step with it (or `force`): one scan of
        every row, without vectors. Only a writer calls this (it holds the writer slot). Whether it rebuilt."""
        assert self.derived is not None
        if not force and self.derived.in_step(collection_mark(self.client, self.collection)):
            return False
        # Also after a source that failed mid-write (its writes unsealed): a write Milvus refused may have landed
        # in part, so only the collection says what it holds.
        self.client.flush(self.collection)
        mark = new_mark()
        set_collection_mark(self.client, self.collection, mark)  # before the scan: a write after it would clear it
        count = self.derived.rebuild(self.reader.iterate("", SCAN_FIELDS), self.dim, mark)
        self._writing = False
        log.info("derived ledger of %s rebuilt from the collection: %d rows", self.collection, count)
        return True

    def close(self) -> None:
        self.connection.close()
