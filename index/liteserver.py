"""One Milvus Lite server process per index folder, shared by every Cairn process that uses that index.

Milvus Lite is an engine that one process opens at a time (it locks its folder). So that a scheduled ingest,
`cairn query`, `cairn status` and services holding a Retriever can all use one embedded index at once, the
first Cairn process that needs it starts `python -m cairn.index.liteserver FOLDER`, which opens the folder and
serves it on a unix socket only this user can reach; every Cairn process then talks to that socket through
pymilvus, exactly as it would to a Milvus server. Nothing to set up, nothing to stop:

- `<folder>.server` (JSON: pid, socket) says where the running server listens; the server writes it once it
  serves and removes it when it stops.
- `<folder>.clients`: each process using the server holds a shared lock on it (released by `release`, or by
  the kernel when the process ends, killed or not). The server stops once it has been able to take that lock
  exclusively for `idle_seconds` in a row, i.e. once no process has used the index for that long.
- `<folder>.start`: an exclusive lock held while a server is started, so two processes never start two.
- `<folder>.server.log`: the server's log.

Only one process writes (index/lock.py); readers see each batch as soon as it is written.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from cairn.errors import StoreError

if TYPE_CHECKING:
    import grpc

log = logging.getLogger(__name__)
START_TIMEOUT_SECONDS = 600.0  # a hang guard: the server's own death is seen at once (a slow machine took minutes)


@dataclass
class _Lease:
    """This process's use of one folder's server: the lease file it holds locked, and its `connect`s to it."""

    handle: IO[str]  # the shared lock lives as long as this descriptor is open
    clients: int


_leases: dict[str, _Lease] = {}  # folder -> this process's lease on its server
_leases_lock = threading.Lock()


def _beside(folder: Path, suffix: str) -> Path:
    return folder.with_name(folder.name + suffix)


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
    _take_lease(folder)
    try:
        return _running(folder) or _start(folder, idle_seconds)
    except BaseException:
        release(folder)
        raise


def release(folder: Path) -> None:
    key = str(folder.resolve())
    with _leases_lock:
        lease = _leases.get(key)
        if lease is None:
            return
        lease.clients -= 1
        if lease.clients <= 0:
            lease.handle.close()  # closing the descriptor drops the shared lock
            del _leases[key]


def leases(folder: Path) -> int:
    """How many leases this process holds on the folder's server (0: none): `connect`s not yet `release`d."""
    with _leases_lock:
        lease = _leases.get(str(folder.resolve()))
        return lease.clients if lease else 0


def stop(folder: Path, wait_seconds: float = 30.0) -> bool:
    """Stop the folder's server now, whoever uses it (their next call fails); whether one was running. For
    moving or restoring the folder, and for tests that change its files."""
    try:
        pid = int(json.loads(_beside(folder.resolve(), ".server").read_text())["pid"])
        os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError, KeyError, TypeError):
        return False
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    raise StoreError(f"the Milvus Lite server for {folder} (pid {pid}) did not stop within {wait_seconds:.0f} s")


def _alive(pid: int) -> bool:
    """Whether the process runs; reaps it when this process started it (an exited child of ours is a zombie
    that signal 0 still reaches)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _take_lease(folder: Path) -> None:
    key = str(folder)
    with _leases_lock:
        if key in _leases:
            _leases[key].clients += 1
            return
        folder.parent.mkdir(parents=True, exist_ok=True)
        handle = open(_beside(folder, ".clients"), "a+")
        fcntl.flock(handle, fcntl.LOCK_SH)  # waits only while a stopping server finishes (it holds it exclusively)
        _leases[key] = _Lease(handle, 1)


def _running(folder: Path) -> str | None:
    """The URI of a live server for the folder, from its `.server` file."""
    try:
        info = json.loads(_beside(folder, ".server").read_text())
        pid, sock = int(info["pid"]), str(info["socket"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return f"unix:{sock}" if _alive(pid) and Path(sock).exists() else None


def _start(folder: Path, idle_seconds: float) -> str:
    with open(_beside(folder, ".start"), "a+") as gate:
        fcntl.flock(gate, fcntl.LOCK_EX)
        uri = _running(folder)  # another process may have started it while this one waited
        if uri:
            return uri
        _beside(folder, ".server").unlink(missing_ok=True)
        with open(_beside(folder, ".server.log"), "ab") as logfile:
            process = subprocess.Popen(
                [sys.executable, "-m", "cairn.index.liteserver", str(folder), "--idle-seconds", str(idle_seconds)],
                stdin=subprocess.DEVNULL,
                stdout=logfile,
                stderr=logfile,
                start_new_session=True,
                close_fds=True,
            )
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            uri = _running(folder)
            if uri:
                return uri
            if process.poll() is not None:
                raise StoreError(_why_not(folder))
            time.sleep(0.02)
        process.kill()
        raise StoreError(
            f"the Milvus Lite server for {folder} did not start within {START_TIMEOUT_SECONDS:.0f} s "
            f"(its log: {_beside(folder, '.server.log')})"
        )


def _why_not(folder: Path) -> str:
    from cairn.index.milvus import lite_open_problem  # the diagnosis shared with the access layer

    return lite_open_problem(folder)


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
    from milvus_lite.db import MilvusLite

    sock = socket_path(folder)
    sock.unlink(missing_ok=True)  # a killed server's; the start lock says no live server uses it
    try:
        db = MilvusLite(str(folder))
    except Exception as exc:  # noqa: BLE001 - the client reports the diagnosis, the log keeps the cause
        log.error("cannot open %s: %s", folder, exc)
        return 3
    server = _grpc_server(db, max_workers=16)
    server.add_insecure_port(f"unix:{sock}")
    server.start()
    os.chmod(sock, 0o600)
    record = _beside(folder, ".server")
    scratch = record.with_suffix(".tmp")
    scratch.write_text(json.dumps({"pid": os.getpid(), "socket": str(sock)}))
    scratch.replace(record)
    log.info("serving %s on %s", folder, sock)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    leases = open(_beside(folder, ".clients"), "a+")
    free_since: float | None = None
    while not stop.wait(0.5):
        if not folder.exists():
            break
        try:
            fcntl.flock(leases, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            free_since = None
            continue
        free_since = free_since or time.monotonic()
        if time.monotonic() - free_since >= idle_seconds:
            break  # keep the lock: a client arriving now waits for this exit, then starts a new server
        fcntl.flock(leases, fcntl.LOCK_UN)
    record.unlink(missing_ok=True)
    server.stop(grace=2).wait()
    db.close()
    sock.unlink(missing_ok=True)
    log.info("stopped serving %s", folder)
    return 0


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
