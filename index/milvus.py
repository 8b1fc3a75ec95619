"""The one way Cairn reaches Milvus, for the writer and the query side alike: open a connection (a Milvus Lite
folder or a server URI, same code), load a collection (repairing what a killed Lite writer left), check the encoder
a collection was filled by. The reads of a collection are index/reader.py's CollectionReader.

Imports pymilvus and nothing of Cairn's ingestion: `cairn.query` builds on it.
"""

from __future__ import annotations

import fcntl
import logging
import sys
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import cast

from pymilvus import MilvusClient
from pymilvus.exceptions import MilvusException

from cairn.closing import Closing
from cairn.errors import StoreError
from cairn.index import liteserver
from cairn.index.reviving import RevivingClient, revive
from cairn.redact import redact
from cairn.schemas.collection import (
    EMBEDDER_PROPERTY,
    embedder_mismatch,
)
from cairn.schemas.config import MilvusConfig

log = logging.getLogger(__name__)


def _no_scipy_until_loaded() -> None:
    """pymilvus asks, on every search and insert, whether the data is a scipy sparse matrix, and to ask it imports
    scipy.sparse (0.5-0.7 s, the first search of a `cairn query`). No object can be one before scipy.sparse was
    imported, so until then the answer is no without importing it; once some code imported it, pymilvus asks as
    it always did."""
    from pymilvus.client import utils

    helper = getattr(utils, "SciPyHelper", None)
    init = getattr(helper, "_init", None)
    if helper is None or init is None or getattr(init, "cairn_deferred", False):
        return
    original = init.__func__

    def _init(cls: type) -> None:
        if "scipy.sparse" in sys.modules:
            original(cls)

    _init.cairn_deferred = True  # type: ignore[attr-defined]
    helper._init = classmethod(_init)


_no_scipy_until_loaded()


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


class Connection(Closing):
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
