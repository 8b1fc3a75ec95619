"""The one way Cairn reaches Milvus, for the writer and the query side alike: open a connection (a Milvus Lite
folder or a server URI, same code), load a collection (repairing what a killed Lite writer left), check the encoder
a collection was filled by, and the reads of a collection (`CollectionReader`), each one batched call.

Imports pymilvus and nothing of Cairn's ingestion: `cairn.query` builds on it.
"""

from __future__ import annotations

import fcntl
import logging
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import cast

from pymilvus import MilvusClient
from pymilvus.exceptions import MilvusException

from cairn.errors import StoreError
from cairn.index import liteserver
from cairn.index.reviving import RevivingClient, revive
from cairn.redact import redact
from cairn.schemas import ChunkType
from cairn.schemas.collection import EMBEDDER_PROPERTY, SPARSE_FIELD, embedder_mismatch, in_list, quote
from cairn.schemas.config import MilvusConfig
from cairn.schemas.fields import Row

log = logging.getLogger(__name__)


@contextmanager
def quiet(*names: str) -> Iterator[None]:
    """Silence the named loggers for a block (third-party noise Cairn has already handled)."""
    loggers = [logging.getLogger(name) for name in names]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def quiet_lite_refusals() -> AbstractContextManager[None]:
    """Milvus Lite lacks the AllocTimestamp RPC that index creation and query iterators ask for;
    pymilvus falls back on its own, but gRPC and pymilvus log each refusal as an error. Hide only that."""
    return quiet("grpc._server", "pymilvus")


SERVER_CONNECT_SECONDS = 30  # a Milvus server by URI: unreachable is said within this
# this user's Lite server, known alive by its pid: a hang guard (a slow machine took minutes)
LITE_CONNECT_SECONDS = 300


class Connection:
    """This process's connection to one Milvus: the client, and for a Lite folder the lease on the one server
    process that serves it to every Cairn process (index/liteserver.py). Whoever opens it closes it, once:

        with Connection.open(config, create=False) as connection:
            connection.client.list_collections()

    On a Lite folder, `client` outlives its server: a call that fails because the server is gone is made again on a
    server started anew, the collections loaded through it loaded again (index/reviving.py). A client handed in
    (`Connection(client)`, e.g. by a caller of Retriever) holds no lease and is used as it is."""

    def __init__(
        self, client: MilvusClient, lite_folder: Path | None = None, config: MilvusConfig | None = None
    ) -> None:
        self.raw_client = client  # the pymilvus client of now
        self.lite_folder = lite_folder  # the lease to release, once
        self.config = config  # how to reach the folder's server again (None: a client handed in, or a server)
        self.closed = False
        self.generation = 0  # clients this connection has had, the first one 0
        self.loaded: dict[str, MilvusConfig] = {}  # collections loaded through `client`, by name
        self.reviving = threading.Lock()
        self.server_pid = liteserver.serving(lite_folder) if lite_folder is not None else None
        revivable = lite_folder is not None and config is not None
        self.client: MilvusClient = cast(MilvusClient, RevivingClient(self)) if revivable else client

    @classmethod
    def open(cls, config: MilvusConfig, create: bool) -> Connection:
        """A connection to the configured URI; a clear StoreError when it cannot be reached, is damaged, or (Lite,
        create=False) does not exist yet."""
        if not config.is_lite:
            return cls(_client(config, config.uri, SERVER_CONNECT_SECONDS))
        folder = Path(config.uri)
        if not create and not folder.exists():
            raise StoreError(f"no index at {config.uri}: run `cairn ingest` first (or set [milvus] uri)")
        if folder.exists() and not folder.is_dir():
            raise StoreError(lite_open_problem(folder))
        uri = liteserver.connect(folder, config.lite_idle_seconds)
        try:
            return cls(_client(config, uri, LITE_CONNECT_SECONDS), folder, config)
        except BaseException:
            liteserver.release(folder)
            raise

    def revive(self, generation: int, failure: BaseException) -> bool:
        """After a call on client `generation` failed (raising `failure`): whether the Lite server behind it was gone
        and this connection now holds a client to a server started anew (index/reviving.py); False when the server
        lives."""
        new_client = lambda config, uri: _client(config, uri, LITE_CONNECT_SECONDS)  # noqa: E731
        return revive(self, generation, failure, new_client, load_collection)

    def close(self) -> None:
        """Close the client and end this process's use of a Lite folder's server (the server stops once no
        process has used it for `[milvus] lite_idle_seconds`); a second call does nothing."""
        if self.closed:
            return
        self.closed = True
        try:
            self.raw_client.close()
        except MilvusException:
            pass
        finally:
            if self.lite_folder is not None:
                liteserver.release(self.lite_folder)

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _client(config: MilvusConfig, uri: str, timeout: float) -> MilvusClient:
    try:
        # dedicated: a channel of this connection's own. pymilvus otherwise shares one channel per URI among all
        # its clients, and after the server behind the URI restarted (a Lite server killed and started anew) a
        # new client was handed the dead channel: the reader's one retry failed as well. A subchannel pool of its
        # own too: gRPC shares subchannels (the connections under channels) among channels to one address, and a
        # new channel could be handed the dead server's, backing off, and fail at once (seen under load).
        return MilvusClient(
            uri=uri,
            token=config.token,
            timeout=timeout,
            dedicated=True,
            grpc_options={"grpc.use_local_subchannel_pool": 1},
        )
    except Exception as exc:  # noqa: BLE001 - pymilvus raises several types for refusal and timeout
        raise StoreError(
            f"cannot reach Milvus at {redact(config.uri)}: {redact(str(exc).splitlines()[0][:300])}"
        ) from None


def lite_open_problem(folder: Path) -> str:
    """Why Milvus Lite would not open its folder (it only logs the reason): a process other than Cairn's
    shared server holds it, or it is not a Milvus Lite index folder at all."""
    rebuild = (
        "move it aside and run `cairn ingest --cleanup full` to rebuild it from the sources, "
        "or restore it from a backup"
    )
    if folder.exists() and not folder.is_dir():
        return (
            f"index {folder} is a file, not a Milvus Lite index folder (an older Milvus Lite's file, or damaged): "
            f"{rebuild}"
        )
    try:
        with open(folder / "LOCK", "a") as handle:  # the advisory lock Milvus Lite holds while the folder is open
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(handle, fcntl.LOCK_UN)
    except BlockingIOError:
        return (
            f"index {folder} is open in another process that does not share it (an older Cairn, or a script "
            "opening it with pymilvus directly): stop that process, or point [milvus] uri at a Milvus server"
        )
    except OSError as exc:
        return f"cannot open the index {folder}: {exc.strerror}"
    return f"Milvus Lite cannot open the index {folder} (damaged, or not a Milvus Lite index folder): {rebuild}"


def collection_exists(client: MilvusClient, config: MilvusConfig) -> bool:
    """Whether the configured collection exists; a damaged Lite folder or a refusing server is one StoreError
    saying what to do, not the engine's traceback."""
    try:
        with quiet("pymilvus", "milvus_lite"):
            return bool(client.has_collection(config.collection))
    except MilvusException as exc:
        raise _damaged(config, exc, "open") from None


# Milvus Lite (3.x) keeps each segment's indexes in sidecar files under <uri>/.../collections/<name>/
# partitions/<p>/indexes/ and writes them in place, so a process killed mid-write leaves a file cut short
# that fails every later load. They are caches: Lite rebuilds a missing one from the segment's data.
LITE_INDEX_SUFFIXES = (".idx", ".sidx")


def lite_index_files(config: MilvusConfig) -> list[Path]:
    root = Path(config.uri)
    return sorted(
        p
        for p in root.glob(f"**/collections/{config.collection}/partitions/*/indexes/*")
        if p.suffix in LITE_INDEX_SUFFIXES
    )


def load_collection(client: MilvusClient, config: MilvusConfig) -> None:
    """Load the collection for search and query. When a Milvus Lite load fails, its index files are removed
    and the load is tried once more (rebuilding them): the repair for an index file a killed run cut short.
    A load that still fails is one StoreError saying what to do, not the engine's traceback."""
    if isinstance(client, RevivingClient):  # loaded again on a server started anew
        client.remember(config)
    if not config.is_lite:
        _load(client, config)
        return
    try:
        with quiet("pymilvus", "milvus_lite"):
            client.load_collection(config.collection)
        return
    except MilvusException as exc:
        files = lite_index_files(config.model_copy(update={"collection": _aliased(client, config.collection)}))
        if not files:
            raise _damaged(config, exc) from None
        log.warning(
            "Milvus Lite could not load %r at %s (%s): rebuilding its %d index files from the data",
            config.collection,
            config.uri,
            str(exc).splitlines()[0][:200],
            len(files),
        )
    for path in files:
        path.unlink(missing_ok=True)
    _load(client, config)


def _aliased(client: MilvusClient, name: str) -> str:
    """The collection an alias names (index/generations.py), whose folder holds the files; else `name` itself."""
    try:
        with quiet("pymilvus", "milvus_lite"):
            return client.describe_collection(name).get("collection_name") or name
    except MilvusException:
        return name


def _load(client: MilvusClient, config: MilvusConfig) -> None:
    try:
        client.load_collection(config.collection)
    except MilvusException as exc:
        raise _damaged(config, exc) from None


def _damaged(config: MilvusConfig, exc: Exception, step: str = "load") -> StoreError:
    what = "the index folder" if config.is_lite else "the collection"
    reason = getattr(exc, "message", None) or str(exc)
    return StoreError(
        f"cannot {step} collection {config.collection!r} at {redact(config.uri)} "
        f"({redact(reason.splitlines()[0][:200])}): {what} may be damaged. Move it aside (or set another [milvus] "
        "collection) and run `cairn ingest --cleanup full` to rebuild it from the sources, which are the record; "
        "or restore it from a backup"
    )


def collection_encoder(client: MilvusClient, collection: str) -> str | None:
    """The encoder identity a collection records (None for one made before encoders were recorded)."""
    return (client.describe_collection(collection).get("properties") or {}).get(EMBEDDER_PROPERTY)


def check_encoder(
    client: MilvusClient, collection: str, identity: str, error: type[StoreError] = StoreError
) -> str | None:
    """Refuse (raising `error`) a collection filled by another encoder; returns what it records."""
    have = collection_encoder(client, collection)
    problem = embedder_mismatch(collection, have, identity)
    if problem:
        raise error(problem)
    return have


class CollectionReader:
    """The reads of one collection, one Milvus call each, whatever the number of ids: dense and BM25 search,
    rows by primary key, children per document, neighbouring sections, paged scans and counts. Every query-side
    call takes the caller's access filter (tenant + ACL + time) and applies it inside Milvus. Read-only: the
    writer (index/store.py) reads through one of these. Open one on the serving generation with
    `cairn.index.generations.open_serving`."""

    def __init__(self, connection: Connection, config: MilvusConfig) -> None:
        self.connection = connection
        self.config = config
        self.collection = config.collection

    @property
    def client(self) -> MilvusClient:
        return self.connection.client

    def search_dense(
        self, field: str, vectors: list[list[float]], expr: str, limit: int, fields: list[str]
    ) -> list[list[Row]]:
        """Nearest rows to each vector on a dense field, per vector, best first."""
        hits: list[list[Row]] = self.client.search(
            self.collection,
            data=vectors,
            anns_field=field,
            limit=limit,
            filter=expr,
            output_fields=fields,
            search_params={"params": {"ef": max(64, limit * 2)}},
        )
        return hits

    def search_bm25(self, text: str, expr: str, limit: int, fields: list[str]) -> list[Row]:
        """Best BM25 matches of the text (Milvus Lite reports the score negated: callers take its magnitude)."""
        hits: list[list[Row]] = self.client.search(
            self.collection, data=[text], anns_field=SPARSE_FIELD, limit=limit, filter=expr, output_fields=fields
        )
        return hits[0]

    def rows(self, chunk_ids: list[str], fields: list[str]) -> list[Row]:
        """Rows by primary key: a point read, where any filter would scan every row (Milvus Lite)."""
        if not chunk_ids:
            return []
        found: list[Row] = self.client.get(self.collection, ids=list(dict.fromkeys(chunk_ids)), output_fields=fields)
        return found

    def any_row(self, expr: str) -> bool:
        """Whether any row passes `expr` (one row asked for; on Milvus Lite still a scan: for rare calls only)."""
        return bool(self.client.query(self.collection, filter=expr, output_fields=["chunk_id"], limit=1))

    def children_per_document(self, document_ids: set[str], expr: str) -> dict[str, int]:
        """How many child rows each document has that `expr` lets through."""
        if not document_ids:
            return {}
        rows = self.client.query(
            self.collection,
            filter=f"{in_list('document_id', sorted(document_ids))} and "
            f"chunk_type == {quote(ChunkType.CHILD.value)} and {expr}",
            output_fields=["document_id"],
        )
        counts: dict[str, int] = {}
        for row in rows:
            counts[row["document_id"]] = counts.get(row["document_id"], 0) + 1
        return counts

    def neighbours(self, seeds: list[Row], expr: str, fields: list[str]) -> list[Row]:
        """The parent sections just before and after each seed section (same document and version)."""
        if not seeds:
            return []
        clauses = [
            f"(document_id == {quote(r['document_id'])} and version_hash == {quote(r['version_hash'])} and "
            f"section_order in [{int(r['section_order']) - 1}, {int(r['section_order']) + 1}])"
            for r in seeds
        ]
        found: list[Row] = self.client.query(
            self.collection,
            filter=f"chunk_type == {quote(ChunkType.FULL_TEXT.value)} and {expr} and ({' or '.join(clauses)})",
            output_fields=fields,
        )
        return found

    def iterate(self, filter: str, fields: list[str], batch_size: int = 1000) -> Iterator[Row]:
        """Every matching row, paged (a plain query is capped at 16,384 rows on a server)."""
        with quiet_lite_refusals():
            iterator = self.client.query_iterator(
                self.collection, batch_size=batch_size, filter=filter, output_fields=fields
            )
            try:
                while page := iterator.next():
                    yield from page
            finally:
                iterator.close()

    def tenants_and_groups(self, tenant: str | None = None) -> tuple[set[str], set[str]]:
        """The tenants on the collection's parent rows (or just `tenant`), and every group of their ACLs."""
        where = f"chunk_type == {quote(ChunkType.FULL_TEXT.value)}" + (
            f" and tenant_id == {quote(tenant)}" if tenant else ""
        )
        tenants: set[str] = set()
        groups: set[str] = set()
        for row in self.iterate(where, ["tenant_id", "access_control_list"]):
            tenants.add(row["tenant_id"])
            groups.update(row["access_control_list"])
        return tenants, groups

    def counts(self) -> Counter[tuple[str, str, str]]:
        """Rows per (tenant, source, chunk_type)."""
        counter: Counter[tuple[str, str, str]] = Counter()
        for row in self.iterate("", ["tenant_id", "source_name", "chunk_type"]):
            counter[(row["tenant_id"], row["source_name"], row["chunk_type"])] += 1
        return counter

    def close(self) -> None:
        """Close the connection (shared with whatever else reads or writes through it)."""
        self.connection.close()

    def __enter__(self) -> CollectionReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
