"""The client of a connection to an embedded index, as everything that holds it sees it: each call goes to the
connection's current pymilvus client, and a call that fails because the Lite server behind it is gone (killed by
the out-of-memory killer, stopped by hand) is made once more, on a new client to a server started anew.

What the gone server had acknowledged is on disk (Milvus Lite logs each write before answering: an upsert and a
delete not yet flushed were both there after a SIGKILL), and every call a Cairn writer makes is idempotent (upserts
by deterministic id, deletes by id, properties set to a value), so making the failed call again is safe. A call
that fails while its server lives fails as it did. Objects a call returned (a query iterator) keep the old client.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from pymilvus import MilvusClient

from cairn.errors import StoreError
from cairn.index import liteserver

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from cairn.index.milvus import Connection
    from cairn.schemas.config import MilvusConfig


class RevivingClient:
    """Stands for a MilvusClient (index/milvus.py Connection.client on a Lite folder)."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    def remember(self, config: MilvusConfig) -> None:
        """`config.collection` was loaded through this client: load it again after a revival."""
        self._connection.loaded[config.collection] = config

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._connection.raw_client, name)
        if not callable(attribute):
            return attribute
        return self._revived(name)

    def _revived(self, name: str) -> Callable[..., Any]:
        connection = self._connection

        def call(*args: Any, **kwargs: Any) -> Any:
            generation = connection.generation
            try:
                return getattr(connection.raw_client, name)(*args, **kwargs)
            except Exception as exc:
                if not connection.revive(generation, exc):
                    raise
            return getattr(connection.raw_client, name)(*args, **kwargs)

        call.__name__ = name
        return call


def revive(
    connection: Connection,
    generation: int,
    failure: BaseException,
    new_client: Callable[[MilvusConfig, str], MilvusClient],
    load: Callable[[Any, MilvusConfig], None],
) -> bool:
    """Connection.revive: when the folder's server that client `generation` used is gone (`failure`: what the call
    raised), a client (`new_client`)
    to the folder's server, started if none runs, in its place, and the collections loaded through it loaded again
    (`load`: index/milvus.py load_collection, which repairs index files a killed server cut short). Whether the
    failed call is worth making again."""
    folder, config = connection.lite_folder, connection.config
    if folder is None or config is None or connection.closed:
        return False
    with connection.reviving:
        if connection.generation != generation:
            return True  # another thread of this process revived it meanwhile
        if not _gone(folder, connection.server_pid, _connection_lost(failure)):
            return False  # the server lives: the call failed for its own reasons
        # closed first: gRPC shares a subchannel among the channels to one address, and the gone server's, backing
        # off after its failures, would refuse the new client's first connection
        with suppress(Exception):
            connection.raw_client.close()
        uri = liteserver.connect(folder, config.lite_idle_seconds)  # a new lease; the server started if none runs
        liteserver.release(folder)  # the lease taken for the server that is gone: one per connection
        connection.raw_client = new_client(config, uri)
        log.warning(
            "the Milvus Lite server for %s (pid %s) was gone: reconnected to a server started anew",
            folder,
            connection.server_pid,
        )
        connection.server_pid = liteserver.serving(folder)
        connection.generation += 1
        for name, loaded in list(connection.loaded.items()):
            try:
                load(connection.raw_client, loaded)
            except StoreError:  # dropped meanwhile (a generation replaced): nothing to load
                del connection.loaded[name]
        return True


GONE_WAIT_SECONDS = 10.0  # a killed server's process exits in a moment; a hang guard under load
CONNECT_FAILED = 2  # pymilvus Status.CONNECT_FAILED: "Fail connecting to server"


def _gone(folder: Any, pid: int | None, lost: bool) -> bool:
    """Whether the server `pid` of `folder` no longer serves it. After a lost connection, a server that still
    looks alive is given GONE_WAIT_SECONDS to be gone: a process killed a moment ago closes its socket before it
    exits, so for a while its pid answers and its socket takes connections nothing serves."""
    deadline = time.monotonic() + (GONE_WAIT_SECONDS if lost else 0.0)
    while pid is not None and liteserver.serving(folder) == pid:
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def _connection_lost(exc: BaseException) -> bool:
    """Whether `exc` (or what it was raised from) says the connection to the server failed, not the request."""
    import grpc

    current: BaseException | None = exc
    for _ in range(10):
        if current is None:
            return False
        if isinstance(current, grpc.RpcError) and current.code() == grpc.StatusCode.UNAVAILABLE:
            return True
        if getattr(current, "code", None) == CONNECT_FAILED:
            return True
        current = current.__cause__ or current.__context__
    return False
