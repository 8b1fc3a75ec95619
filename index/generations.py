"""Generations: the configured `[milvus] collection` is an alias over physical collections `<name>__g1`,
`<name>__g2`, ..., so an index can be rebuilt beside the one serving and switched to atomically.

A writer asks `Generations.target` where to write. When the serving generation fits its encoder and schema, it
writes there (no reindex, nothing re-embedded). When it does not (the `[embedding] backend` changed, a schema
change), it builds the next generation (or resumes the one a killed or failing run left) while the alias keeps
serving the old; `switch` moves the alias once every configured source was built, then drops the old. An index
from before generations (a plain collection under the configured name) keeps working as it is; its first
rebuild makes `<name>__g2`, and the switch drops the plain collection and creates the alias in its place: the
one moment, a few milliseconds, the name serves nothing (a Retriever waits it out, query/serving.py).

Each generation records its encoder (`cairn.embedder`) and, while it is built, the sources finished into it
(`cairn.built_sources`): the state lives in Milvus, with the rows it describes.

Every reader (`cairn status`, `report`, `reconcile`, a Retriever) opens what the name serves with `open_serving`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pymilvus import MilvusClient

from cairn.errors import NoCollection
from cairn.index.milvus import Connection, collection_encoder, collection_exists, load_collection
from cairn.index.reader import CollectionReader
from cairn.schemas.collection import embedder_mismatch, schema_mismatch
from cairn.schemas.config import MilvusConfig

log = logging.getLogger(__name__)

BUILT_PROPERTY = "cairn.built_sources"  # JSON list of the sources finished into a generation being built


def generation_name(name: str, number: int) -> str:
    return f"{name}__g{number}"


def generation_number(name: str, collection: str) -> int | None:
    """N for `<name>__gN`, else None (the plain legacy collection, or another collection)."""
    found = re.fullmatch(re.escape(name) + r"__g([0-9]+)", collection)
    return int(found.group(1)) if found else None


@dataclass(frozen=True)
class Serving:
    """What the configured name serves now: a generation through the alias, a plain (pre-generation)
    collection, or nothing yet."""

    collection: str | None
    aliased: bool
    encoder: str | None = None


@dataclass
class Target:
    """Where a writer writes, and whether that is a rebuild beside what serves."""

    milvus: MilvusConfig  # the configuration with `collection` = the physical collection to write
    serving: str | None  # the physical collection serving now (None: a new index)
    rebuild_reason: str = ""  # why the serving one cannot be written ("" when writing it)
    publish: bool = False  # a new index: the alias is created once the collection exists

    @property
    def collection(self) -> str:
        return self.milvus.collection

    @property
    def rebuilding(self) -> bool:
        return bool(self.rebuild_reason)

    @property
    def state_scope(self) -> str:
        """Whose cursors the run reads and saves (index/state.py): a generation being built keeps its own."""
        return self.collection if self.rebuilding else ""


@dataclass
class Generations:
    """The generations of one configured collection on one Milvus."""

    client: MilvusClient
    milvus: MilvusConfig
    dropped: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.milvus.collection

    def physical(self, collection: str) -> MilvusConfig:
        return self.milvus.model_copy(update={"collection": collection})

    def numbers(self) -> list[int]:
        """The generations that exist, oldest first."""
        found = (generation_number(self.name, c) for c in self.client.list_collections())
        return sorted(n for n in found if n is not None)

    def serving_collection(self) -> tuple[str | None, bool]:
        """The collection the name serves and whether through the alias: two cheap calls, no describe."""
        # listed first: a failing lookup must never pass for "no alias" (it would make a writer migrate)
        listed = self.client.list_aliases()  # {"aliases": [...]} (pymilvus 3 on Lite), or a list
        if self.name in ((listed.get("aliases") if isinstance(listed, dict) else listed) or []):
            return self.client.describe_alias(self.name)["collection_name"], True
        return (self.name, False) if self.client.has_collection(self.name) else (None, False)

    def serving(self) -> Serving:
        collection, aliased = self.serving_collection()
        return Serving(collection, aliased, collection_encoder(self.client, collection) if collection else None)

    def problem(self, collection: str, identity: str, dim: int) -> str | None:
        """Why a writer embedding with `identity` into `dim`-wide vectors cannot write `collection`."""
        have = collection_encoder(self.client, collection)
        schema = schema_mismatch(collection, self.client.describe_collection(collection), dim)
        if schema is None and embedder_mismatch(collection, have, identity) is None:
            return None
        return schema or f"its encoder is {have!r}, the config's {identity!r}"

    def target(self, identity: str, dim: int) -> Target:
        """Where a writer with this encoder writes; drops generations nothing will ever serve."""
        serving, numbers = self.serving(), self.numbers()
        if serving.collection is None:  # a new index, or a first run killed before its alias was made
            fits = [n for n in numbers if self.problem(generation_name(self.name, n), identity, dim) is None]
            number = fits[-1] if fits else max(numbers, default=0) + 1
            self._drop(generation_name(self.name, n) for n in numbers if n != number)
            return Target(self.physical(generation_name(self.name, number)), None, publish=True)
        reason = self.problem(serving.collection, identity, dim)
        if reason is None:  # write what serves; a build abandoned (the config went back) is dropped
            self._drop(
                generation_name(self.name, n) for n in numbers if generation_name(self.name, n) != serving.collection
            )
            return Target(self.physical(serving.collection), serving.collection)
        below = generation_number(self.name, serving.collection) or 1  # the plain legacy collection counts as 1
        newer = [n for n in numbers if n > below]
        resume = (
            newer[-1] if newer and self.problem(generation_name(self.name, newer[-1]), identity, dim) is None else None
        )
        number = resume or max([below, *numbers]) + 1
        self._drop(generation_name(self.name, n) for n in newer if n != number)
        log.warning(
            "%s serves %r, and %s: building %s beside it",
            serving.collection,
            self.name,
            reason,
            generation_name(self.name, number),
        )
        return Target(self.physical(generation_name(self.name, number)), serving.collection, reason)

    def publish(self, target: Target) -> None:
        """A new index: the configured name starts serving its first generation."""
        if target.publish:
            self.client.create_alias(target.collection, self.name)

    # ---- a build's progress, kept on the generation itself ---------------------------------------------
    def built(self, collection: str) -> set[str]:
        properties = self.client.describe_collection(collection).get("properties") or {}
        return set(json.loads(properties.get(BUILT_PROPERTY) or "[]"))

    def mark_built(self, collection: str, source: str) -> set[str]:
        done = self.built(collection) | {source}
        self.client.alter_collection_properties(collection, properties={BUILT_PROPERTY: json.dumps(sorted(done))})
        return done

    def switch(self, target: Target) -> str | None:
        """Serve `target` instead of what serves now, atomically (one alias change), then drop the old.
        Returns the collection dropped."""
        old = target.serving
        self.client.flush(target.collection)
        load_collection(self.client, target.milvus)  # loaded before the first query reaches it
        if old is not None and generation_number(self.name, old) is None:
            # the plain collection holds the name an alias needs: the one-time migration's short gap
            self.client.drop_collection(old)
            self.client.create_alias(target.collection, self.name)
            return old
        self.client.alter_alias(target.collection, self.name)
        if old is not None:
            self._drop([old])
        return old

    def _drop(self, collections: Iterable[str]) -> None:
        for collection in collections:
            log.warning("dropping %s: the alias %r no longer serves it", collection, self.name)
            self.client.drop_collection(collection)
            self.dropped.append(collection)

    def status(self) -> dict[str, Any]:
        """What `cairn status` shows: the serving collection and its encoder, and a build in progress."""
        serving = self.serving()
        below = generation_number(self.name, serving.collection or "") or (1 if serving.collection else 0)
        building = [generation_name(self.name, n) for n in self.numbers() if n > below]
        out: dict[str, Any] = {
            "serving": serving.collection,
            "aliased": serving.aliased,
            "encoder": serving.encoder,
            "building": None,
        }
        if building:
            collection = building[-1]
            out["building"] = {
                "collection": collection,
                "encoder": collection_encoder(self.client, collection),
                "built_sources": sorted(self.built(collection)),
            }
        return out


def open_serving(config: MilvusConfig, create: bool = False) -> CollectionReader:
    """A reader of the generation the configured name serves now (through the alias, or a plain collection from
    before generations), loaded, on a connection of its own that closing the reader closes:

        with open_serving(config.milvus) as reader:
            reader.counts()

    StoreError when the index cannot be opened (or, create=False, a Lite folder does not exist) or is damaged;
    NoCollection when the name serves nothing yet."""
    connection = Connection.open(config, create=create)
    try:
        collection_exists(connection.client, config)  # a damaged index is one clear StoreError, not a traceback
        collection, _ = Generations(connection.client, config).serving_collection()
        if collection is None:
            raise NoCollection(f"no collection {config.collection!r} at {config.uri}: run `cairn ingest`")
        return read_generation(connection, config, collection)
    except BaseException:
        connection.close()
        raise


def read_generation(connection: Connection, config: MilvusConfig, collection: str) -> CollectionReader:
    """A reader of `collection`, a generation of (or the plain collection under) `config.collection`, loaded."""
    physical = config.model_copy(update={"collection": collection})
    load_collection(connection.client, physical)
    return CollectionReader(connection, physical)
