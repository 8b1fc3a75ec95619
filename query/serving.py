"""What a Retriever reads and embeds with: the collection the configured name serves now, and that collection's
encoder, kept in step as a rebuild switches the alias (index/generations.py).

During a rebuild the configuration already names the new encoder while the alias still serves the old
generation: queries must be embedded with the encoder whose vectors they are compared with. So a Retriever
reads the serving generation by its own name and embeds with the encoder it records (built from the recorded
identity when it is not the configured one). At most every `[query] serving_check_seconds` it asks Milvus
which generation serves (one alias lookup, well under a millisecond) and, when that changed, moves to the new
generation and its encoder together. A read that fails (the old generation dropped under it, or the engine
restarted) asks again and retries once. Never one encoder's query against another's vectors.
"""

from __future__ import annotations

import logging
import time
from contextlib import suppress
from typing import Protocol

from cairn.embedding import Encoder, encoder_for_identity
from cairn.embedding.model import DEFAULT_ONNX_CACHE
from cairn.errors import RetrievalError, StoreError
from cairn.index.generations import Generations, read_generation
from cairn.index.milvus import Connection, collection_encoder
from cairn.index.protocol import IndexReader
from cairn.index.reader import CollectionReader
from cairn.schemas.config import MilvusConfig

log = logging.getLogger("cairn.query")
GAP_RETRIES = 20  # x 0.1 s: the one-time migration of a plain collection leaves its name unserved for milliseconds


class Served(Protocol):
    """What a Retriever reads through: a reader and the encoder of its vectors, now and after a failed read."""

    collection: str | None

    @property
    def reader(self) -> IndexReader: ...

    @property
    def encoder(self) -> Encoder: ...

    def current(self) -> tuple[IndexReader, Encoder]: ...

    def recover(self) -> tuple[IndexReader, Encoder]: ...

    def ping(self) -> str: ...


class FixedCollection:
    """A reader without generations (index/memory.py InMemoryStore): read as it is, with the encoder given."""

    collection: str | None = "memory"

    def __init__(self, reader: IndexReader, encoder: Encoder) -> None:
        self.reader = reader
        self.encoder = encoder

    def current(self) -> tuple[IndexReader, Encoder]:
        return self.reader, self.encoder

    def recover(self) -> tuple[IndexReader, Encoder]:
        return self.reader, self.encoder

    def ping(self) -> str:
        return "memory"


class ServedCollection:
    """The serving generation's reader and encoder, re-checked at most every `check_seconds`."""

    def __init__(self, reader: CollectionReader, milvus: MilvusConfig, encoder: Encoder, check_seconds: float) -> None:
        self.milvus = milvus
        self.configured = encoder  # what the config embeds with: used whenever the serving collection records it
        self.check_seconds = check_seconds
        self.collection: str | None = None
        self.aliased = True
        self.reader = reader
        self.encoder = encoder
        self._checked = float("-inf")
        self._follow()

    def current(self) -> tuple[IndexReader, Encoder]:
        """The reader and encoder to use now (re-checked when `check_seconds` have passed)."""
        # A plain collection named like the alias (an index made before generations) is checked on every query:
        # once migrated, the same name resolves to the alias, and reads would succeed against the new vectors.
        if not self.aliased or time.monotonic() - self._checked >= self.check_seconds:
            self._follow()
        return self.reader, self.encoder

    def ping(self) -> str:
        """The collection generation the configured name serves, asked of the index now (one alias lookup): a
        health check. RetrievalError when the name serves nothing; the engine's error when it does not answer."""
        collection, _ = Generations(self.reader.client, self.milvus).serving_collection()
        if collection is None:
            raise RetrievalError(f"no collection {self.milvus.collection!r} at {self.milvus.uri}")
        return collection

    def recover(self) -> tuple[IndexReader, Encoder]:
        """After a failed read: reopen the client (the engine may have restarted) and follow the alias again."""
        with suppress(Exception):  # the old client may be broken in any way: it is being replaced
            self.reader.close()
        try:  # not open_serving: the name may serve nothing for a moment (a legacy index's migration), waited out below
            connection = Connection.open(self.milvus, create=False)
        except StoreError as exc:
            raise RetrievalError(str(exc)) from None
        self.reader = CollectionReader(connection, self.milvus)
        self.collection = None
        self._follow()
        return self.reader, self.encoder

    def _follow(self) -> None:
        collection = None
        for _ in range(GAP_RETRIES):
            collection, self.aliased = Generations(self.reader.client, self.milvus).serving_collection()
            if collection is not None:
                break
            time.sleep(0.1)
        self._checked = time.monotonic()
        if collection is None:
            raise RetrievalError(
                f"no collection {self.milvus.collection!r} at {self.milvus.uri}: run `cairn ingest` first"
            )
        if collection == self.collection and (
            self.aliased or collection_encoder(self.reader.client, collection) == self.encoder.identity
        ):
            return
        identity = collection_encoder(self.reader.client, collection)
        encoder = self._encoder_for(collection, identity)
        self.reader = read_generation(self.reader.connection, self.milvus, collection)
        if self.collection is not None:
            log.info("collection %r now serves %s (encoder %s)", self.milvus.collection, collection, identity)
        self.collection, self.encoder = collection, encoder

    def _encoder_for(self, collection: str, identity: str | None) -> Encoder:
        """The configured encoder when it made the collection's vectors (or the collection does not say), else
        the one it records, loaded now so that a process unable to run it says so before answering."""
        if identity is None or identity == self.configured.identity:
            return self.configured
        if identity == self.encoder.identity:
            return self.encoder
        try:
            encoder = encoder_for_identity(identity, getattr(self.configured, "onnx_cache", DEFAULT_ONNX_CACHE))
            encoder.encode(["warm up"])
        except Exception as exc:  # noqa: BLE001 - no torch (a query install), an unknown model, a failing export
            raise RetrievalError(
                f"collection {collection!r} (serving {self.milvus.collection!r}) holds vectors from the encoder "
                f"{identity!r}, and this process embeds with {self.configured.identity!r} and cannot load the other "
                f"({type(exc).__name__}: {str(exc)[:200]}): export that encoder's query model "
                "(`cairn export-query-model`) for [embedding] query_model, or install the full Cairn"
            ) from None
        log.info(
            "collection %s holds vectors from %s: queries are embedded with it, not %s",
            collection,
            identity,
            self.configured.identity,
        )
        return encoder
