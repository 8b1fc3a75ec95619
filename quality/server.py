"""great-expectations kept imported between runs: one checks server per user and version of Cairn's code.

Importing great-expectations costs 3-6 s of one core (its expectation registry pulls in scipy.stats, altair and
sqlalchemy). A process of each run imported it (quality/worker.py started it early, beside the run's own work),
and a run that wrote a handful of pages still waited for it: half of a 1%-edit run's 17 s at 2,000 pages, whose
model took 2.6 s. So the checks run in a shared server of cairn/daemon.py, like the index's (index/liteserver.py):
the first run with rows to check starts `python -m cairn.quality.server BASE` detached; it imports
great-expectations once and checks for every later run of this user, until no run has used it for `[quality]
worker_idle_seconds` (default 900: runs closer together than 15 minutes find it warm; 0: it stops with the run).

It runs great-expectations alone (quality/checks.py `validate`, Data Docs into the report folder the run made):
the run's own process writes the rest of the report (the dashboard, the outcomes kept in the derived ledger, an
upload with its own credentials), so the server holds nothing of a run's but the frame of figures it is asked
about. Where it lives: a folder only this user can enter (`/tmp/cairn-<uid>`, mode 700, the one the index's
sockets use), `quality-<code>.server` (pid, socket), `.clients` (the runs' leases), `.start`, `.server.log`, and
the socket `quality-<code>.sock` (mode 600); a connection proves it knows the key in the record (HMAC challenge,
multiprocessing.connection) before anything is read from it. `<code>` names Cairn's code and the interpreter: a
changed or upgraded Cairn starts a server of its own, and a server whose code changed on disk stops within
CODE_CHECK_SECONDS. `python -m cairn.quality.server --stop` stops this user's servers now.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import logging
import os
import signal
import sys
import tempfile
import threading
import time
from concurrent.futures import Future
from functools import lru_cache
from multiprocessing.connection import Client, Connection, Listener
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cairn import daemon
from cairn.errors import CairnError

if TYPE_CHECKING:
    import pandas as pd

    from cairn.schemas.config import CairnConfig

log = logging.getLogger(__name__)
CODE_CHECK_SECONDS = 10.0  # how often a server compares its code with the code on disk
NAME = "quality"  # <private folder>/quality-<code>.*
# the code a server runs, besides the interpreter: what its answers and what crosses the socket are made of
CODE_PACKAGES = ("cairn", "cairn.quality", "cairn.schemas", "cairn.chunkers")
LIBRARIES = ("great_expectations", "pandas", "numpy")


def private_folder() -> Path:
    """`/tmp/cairn-<uid>`, made if absent: this user's alone (mode 700), else CairnError."""
    folder = Path(tempfile.gettempdir()) / f"cairn-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    info = folder.stat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise CairnError(f"{folder} must belong to this user and be private (mode 700) to hold Cairn's sockets")
    return folder


def code_fingerprint() -> str:
    """Names the code a checks server runs: the interpreter and its environment, Cairn's modules it uses (each file's
    path, size and modification time) and the libraries' (their package's __init__). Stats only: a millisecond or
    two. The interpreter by its real file: `cairn` (a virtualenv's `python3`) and `python -m cairn.cli` (its
    `python`, a link to the same file) share one server; each had one of its own, 290 MB apiece."""
    digest = hashlib.sha256(f"{os.path.realpath(sys.executable)}\0{sys.prefix}".encode())
    for name in CODE_PACKAGES + LIBRARIES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            digest.update(f"{name}: absent".encode())
            continue
        origin = Path(spec.origin)
        files = sorted(origin.parent.glob("*.py")) if name in CODE_PACKAGES else [origin]
        for path in files:
            try:
                info = path.stat()
            except OSError:
                continue
            digest.update(f"{path}:{info.st_size}:{info.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


@lru_cache(maxsize=1)
def base() -> Path:
    """This user's checks server of this code: the path prefix of its files (cairn/daemon.py)."""
    return private_folder() / f"{NAME}-{code_fingerprint()}"


def running() -> int | None:
    """The pid of this code's checks server, when one runs."""
    record = daemon.running(base())
    return int(record["pid"]) if record is not None else None


def stop(wait_seconds: float = 30.0) -> int | None:
    """Stop this code's checks server now: its pid, or None when none ran."""
    return daemon.stop(base(), wait_seconds)


def stop_all(wait_seconds: float = 30.0) -> list[int]:
    """Stop every checks server of this user (of any code) now: their pids. A run using one checks in its own
    process instead."""
    stopped = []
    for record in sorted(private_folder().glob(f"{NAME}-*.server")):
        pid = daemon.stop(record.with_suffix(""), wait_seconds)
        if pid is not None:
            stopped.append(pid)
    return stopped


class ChecksServer:
    """A run's way to the checks server: found or started in the background from construction on (the run goes on
    meanwhile), and a lease on it held by this object until `close()` (or until it is collected, or its process
    exits: the lease is an open file's lock). `validate` is quality/checks.py's, run there."""

    def __init__(self, idle_seconds: float) -> None:
        self.idle_seconds = idle_seconds
        self._address: Future[tuple[str, bytes]] = Future()
        self._lease: Any = None
        self._closed = False
        self._lock = threading.Lock()
        # a daemon thread: a command that stops early (an error, Ctrl-C) does not wait for the server's start
        threading.Thread(target=self._connect, name="cairn-quality-server", daemon=True).start()

    def _connect(self) -> None:
        try:
            named = base()
            command = [sys.executable, "-m", __name__, str(named), "--idle-seconds", str(self.idle_seconds)]
            why = (
                f"the data-quality checks server exited before serving (its log: {daemon.beside(named, '.server.log')})"
            )
            record = daemon.connect(
                named, daemon.Server("the data-quality checks server", command, _usable, lambda: why)
            )
            try:
                with self._lock:  # this object's own lease (daemon.connect's is the process's): dropped with it
                    if not self._closed:
                        self._lease = open(daemon.beside(named, ".clients"), "a+")
                        _lock_shared(self._lease)
            finally:
                daemon.release(named)
            self._address.set_result((str(record["socket"]), bytes.fromhex(str(record["key"]))))
        except BaseException as exc:  # noqa: BLE001 - handed to `validate`, which checks in this process then
            self._address.set_exception(exc)

    def validate(self, frame: pd.DataFrame, config: CairnConfig, dim: int, folder: Path) -> pd.DataFrame:
        """quality/checks.py `validate` in the server; here, when there is no server to be had (it could not start,
        it died, its answer cannot be read): the report is the same either way, only later."""
        from cairn.quality.checks import validate

        try:
            address, key = self._address.result()
            with Client(address, family="AF_UNIX", authkey=key) as conn:
                conn.send((frame, config, dim, str(folder)))
                ok, value = conn.recv()
        except Exception as exc:  # noqa: BLE001 - no server: check here, as a run did before there was one
            log.warning("the data-quality checks server is not available (%s); checking in this process", exc)
            return validate(frame, config, dim, folder)
        if not ok:
            raise value
        return value

    def close(self) -> None:
        """Let go of the server (it stops `idle_seconds` after its last run let go)."""
        with self._lock:
            self._closed = True
            if self._lease is not None:
                self._lease.close()
                self._lease = None


def _lock_shared(handle: Any) -> None:
    import fcntl

    fcntl.flock(handle, fcntl.LOCK_SH)  # never waits: the process's lease, held meanwhile, keeps the server up


def _usable(record: dict[str, Any]) -> bool:
    """Whether the record names a socket that exists and a key (a record of an older layout does not)."""
    return Path(str(record.get("socket"))).exists() and bool(record.get("key"))


# ---- the server process ------------------------------------------------------------------------------------


def serve(named: Path, idle_seconds: float) -> int:
    """Import great-expectations (the point of the server), then check each frame asked until idle."""
    code = named.name.removeprefix(f"{NAME}-")
    claimed = daemon.claim(named)  # before the import: a second server started meanwhile leaves at once
    if claimed is None:
        return daemon.ALREADY_SERVING
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # started from a terminal: its Ctrl-C is the command's
    import great_expectations  # noqa: F401

    from cairn.quality.checks import CompiledTemplates, validate

    CompiledTemplates().install()  # its Data Docs templates compiled once, not on every run

    sock = daemon.beside(named, ".sock")
    sock.unlink(missing_ok=True)  # a killed server's: the start lock says none serves
    key = os.urandom(32)
    listener = Listener(str(sock), family="AF_UNIX", authkey=key)
    os.chmod(sock, 0o600)
    threading.Thread(target=_answer, args=(listener, validate), name="answer", daemon=True).start()
    daemon.publish(named, {"socket": str(sock), "key": key.hex()})
    log.info("serving data-quality checks on %s", sock)
    held = daemon.wait_idle(named, idle_seconds, stopping, valid=_same_code(code))
    daemon.unpublish(named)
    listener.close()
    sock.unlink(missing_ok=True)
    log.info("stopped serving data-quality checks")
    claimed.close()  # before the leases: a run let in by them must find the claim free for its own server
    held.close()
    return 0


def _answer(listener: Listener, validate: Any) -> None:
    """One run's question at a time: great-expectations is not known to be safe across threads."""
    while True:
        try:
            conn = listener.accept()
        except OSError:  # the listener closed: the server is stopping
            return
        except Exception as exc:  # noqa: BLE001 - a caller without the key (AuthenticationError): nothing read
            log.warning("refused a connection: %s", exc)
            continue
        with conn:
            _one(conn, validate)


def _one(conn: Connection, validate: Any) -> None:
    import pickle

    try:
        frame, config, dim, folder = conn.recv()
    except Exception as exc:  # noqa: BLE001 - a caller gone, or a frame this code cannot read
        log.warning("could not read a question: %s", exc)
        return
    try:
        answer: tuple[bool, Any] = (True, validate(frame, config, dim, Path(folder)))
    except Exception as exc:  # noqa: BLE001 - the caller raises it, as if the check had run there
        try:
            pickle.loads(pickle.dumps(exc))  # one the caller could not rebuild: its text instead
            answer = (False, exc)
        except Exception:  # noqa: BLE001
            answer = (False, RuntimeError(f"{type(exc).__name__}: {exc}"))
    try:
        conn.send(answer)
    except OSError as exc:  # the caller gave up (interrupted): nothing to answer
        log.warning("could not answer: %s", exc)


def _same_code(code: str) -> Any:
    """Whether the code on disk is still the code this server runs, asked at most every CODE_CHECK_SECONDS."""
    checked = [time.monotonic(), True]

    def valid() -> bool:
        if time.monotonic() - checked[0] >= CODE_CHECK_SECONDS:
            checked[:] = [time.monotonic(), code_fingerprint() == code]
        return bool(checked[1])

    return valid


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Serve Cairn's data-quality checks (great-expectations, imported once) to this user's runs."
    )
    parser.add_argument("base", type=Path, nargs="?", help="the server's files' prefix (runs start it with one)")
    parser.add_argument("--idle-seconds", type=float, default=900.0)
    parser.add_argument("--stop", action="store_true", help="stop this user's checks servers now, and exit")
    args = parser.parse_args(argv)
    if args.stop:
        stopped = stop_all()
        print(f"stopped {len(stopped)} data-quality checks server(s)" + (f": pid {stopped}" if stopped else ""))
        return 0
    if args.base is None:
        parser.error("give the server's base path, or --stop")
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(process)d %(levelname)s %(message)s")
    log.setLevel(logging.INFO)  # its own start and stop; great-expectations' lines only when they warn
    return serve(args.base, args.idle_seconds)


if __name__ == "__main__":
    raise SystemExit(main())
