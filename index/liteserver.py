"""One Milvus Lite server process per index folder, shared by every Cairn process that uses that index.

Milvus Lite is an engine that one process opens at a time (it locks its folder). So that a scheduled ingest,
`cairn query`, `cairn status` and services holding a Retriever can all use one embedded index at once, the
first Cairn process that needs it starts `python -m cairn.index.liteserver FOLDER`, which opens the folder and
serves it on a unix socket only this user can reach; every Cairn process then talks to that socket through
pymilvus, exactly as it would to a Milvus server. It is a shared server of cairn/daemon.py, named by the
folder: `<folder>.server` (pid, socket), `<folder>.clients` (the leases), `<folder>.start`, `<folder>.server.log`;
it stops `lite_idle_seconds` after its last client is gone.

Only one process writes (index/lock.py); readers see each batch as soon as it is written.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import signal
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cairn import daemon
from cairn.errors import CairnError, StoreError

if TYPE_CHECKING:
    import grpc

log = logging.getLogger(__name__)
PROBE_SECONDS = 2.0  # a hang guard on a connection to a local socket, answered at once by a live server


def socket_path(folder: Path) -> Path:
    """The server's socket: in a folder only this user can enter (a socket beside a deep index folder could
    exceed the 107-byte limit of a unix socket path)."""
    runtime = Path(tempfile.gettempdir()) / f"cairn-{os.getuid()}"
    runtime.mkdir(mode=0o700, exist_ok=True)
    info = runtime.stat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise StoreError(f"{runtime} must belong to this user and be private (mode 700) to hold the index's socket")
    return runtime / (hashlib.sha256(str(folder).encode()).hexdigest()[:24] + ".sock")


def connect(folder: Path, idle_seconds: float) -> str:
    """The `unix:` URI of the server for `folder`, started if none runs. The calling process holds a lease on
    it until `release(folder)` (once per `connect`) or its exit."""
    folder = folder.resolve()
    command = [sys.executable, "-m", "cairn.index.liteserver", str(folder), "--idle-seconds", str(idle_seconds)]
    try:
        record = daemon.connect(
            folder, daemon.Server(f"the Milvus Lite server for {folder}", command, _usable, _why_not(folder))
        )
    except CairnError as exc:
        raise StoreError(str(exc)) from None
    return f"unix:{record['socket']}"


def release(folder: Path) -> None:
    daemon.release(folder.resolve())


def serving(folder: Path) -> int | None:
    """The pid of the live server of `folder` that can be used now, or None (none runs, or it is gone)."""
    record = daemon.running(folder.resolve())
    return int(record["pid"]) if record is not None and _usable(record) else None


def leases(folder: Path) -> int:
    """How many leases this process holds on the folder's server (0: none): `connect`s not yet `release`d."""
    return daemon.leases(folder.resolve())


def stop(folder: Path, wait_seconds: float = 30.0) -> bool:
    """Stop the folder's server now, whoever uses it (their next call fails); whether one was running. For
    moving or restoring the folder, and for tests that change its files."""
    try:
        return daemon.stop(folder.resolve(), wait_seconds) is not None
    except TimeoutError as exc:
        raise StoreError(f"the Milvus Lite server for {folder} did not stop: {exc}") from None


def _usable(record: dict[str, Any]) -> bool:
    """Whether the server's socket takes a connection now: the file alone outlives a server killed a moment ago
    whose process has not quite exited (seen under load), and a client then had a refused connection."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(PROBE_SECONDS)
    try:
        probe.connect(str(record.get("socket")))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def _why_not(folder: Path) -> Callable[[], str]:
    def diagnosis() -> str:
        from cairn.index.milvus import lite_open_problem  # the diagnosis shared with the access layer

        return lite_open_problem(folder)

    return diagnosis


# ---- the server process ------------------------------------------------------------------------------------
# pymilvus pings its server every 10 s, idle or not (keepalive_time_ms 10000, permit_without_calls). gRPC's server
# defaults allow one ping in 5 minutes without data and answer the third early one with GOAWAY "too_many_pings":
# every client then logged an error and reconnected, mid-ingest. Pings on a private unix socket cost nothing.
PING_OPTIONS = [
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_ping_interval_without_data_ms", 5000),
    ("grpc.http2.max_ping_strikes", 0),  # 0: never answer early pings with GOAWAY
]


def _grpc_server(db: Any, max_workers: int) -> grpc.Server:
    """Milvus Lite's gRPC adapter (as its own _build_server builds it), with PING_OPTIONS."""
    from concurrent import futures

    import grpc
    from milvus_lite.adapter.grpc import server as adapter

    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=max_workers),
        options=[
            ("grpc.max_receive_message_length", adapter._MAX_MESSAGE_SIZE),
            ("grpc.max_send_message_length", adapter._MAX_MESSAGE_SIZE),
            *PING_OPTIONS,
        ],
    )
    adapter.milvus_pb2_grpc.add_MilvusServiceServicer_to_server(adapter.MilvusServicer(db), server)
    return server


def serve(folder: Path, idle_seconds: float) -> int:
    sock = socket_path(folder)
    try:
        db = _open_when_free(folder)  # first: it locks the folder, so no other server of it still runs
    except Exception as exc:  # noqa: BLE001 - the client reports the diagnosis, the log keeps the cause
        log.error("cannot open %s: %s", folder, exc)
        return 3
    sock.unlink(missing_ok=True)  # a killed server's: the folder's lock says it is gone
    server = _grpc_server(db, max_workers=16)
    server.add_insecure_port(f"unix:{sock}")
    server.start()
    os.chmod(sock, 0o600)
    daemon.publish(folder, {"socket": str(sock)})
    log.info("serving %s on %s", folder, sock)
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    held = daemon.wait_idle(folder, idle_seconds, stopping, valid=folder.exists)
    daemon.unpublish(folder)
    server.stop(grace=2).wait()
    db.close()
    sock.unlink(missing_ok=True)
    log.info("stopped serving %s", folder)
    held.close()
    return 0


LOCKED_WAIT_SECONDS = 10.0  # a server killed a moment ago holds the folder's lock until its process has exited


def _open_when_free(folder: Path) -> Any:
    """Milvus Lite on `folder`, once the folder's lock is free: a server killed a moment ago (whose socket already
    refuses, so a client started this one) may still be exiting, its lock held a little longer."""
    from milvus_lite import DataDirLockedError
    from milvus_lite.db import MilvusLite

    deadline = time.monotonic() + LOCKED_WAIT_SECONDS
    while True:
        try:
            return MilvusLite(str(folder))
        except DataDirLockedError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Serve one Milvus Lite index folder to the Cairn processes of this user."
    )
    parser.add_argument("folder", type=Path)
    parser.add_argument("--idle-seconds", type=float, default=30.0)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(process)d %(levelname)s %(message)s")
    return serve(args.folder.resolve(), args.idle_seconds)


if __name__ == "__main__":
    raise SystemExit(main())
