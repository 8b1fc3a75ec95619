"""A server process shared by this user's Cairn processes: started by the first process that needs it, leased by
every process that uses it, stopped once none has used it for a while. Nothing to set up, nothing to stop.

Two servers are run this way: the embedded index's (index/liteserver.py: Milvus Lite opens a folder in one
process only) and the local Prefect API (flows/prefect_server.py: Prefect runs a flow only against an API).
Each is named by a path prefix `base`, and everything about it lives beside that prefix:

- `<base>.server` (JSON: its pid and where it listens): the server writes it once it serves and removes it
  when it stops; a record whose process is gone is stale.
- `<base>.clients`: each process using the server holds a shared lock on it (released by `release`, or by
  the kernel when the process ends, killed or not). The server stops once it has been able to take that lock
  exclusively for `idle_seconds` in a row, i.e. once no process has used it for that long.
- `<base>.start`: an exclusive lock held while a server is started, so two processes never start two.
- `<base>.serving`: an exclusive lock a server takes first thing (`claim`) and holds for its life: a process
  whose starter died before the server published (a run interrupted while its server imported) leaves the lock
  held, and the next starter's server, refused it, exits ALREADY_SERVING, while the starter waits for the first
  server's record instead of running a second one.
- `<base>.server.log`: the server's log.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from cairn.errors import CairnError

ALREADY_SERVING = 75  # a server's exit code when another server of its base holds the claim (`claim`)
START_TIMEOUT_SECONDS = 600.0  # a hang guard: the server's own death is seen at once (a slow machine took minutes)
STOP_WAIT_SECONDS = 120.0  # a hang guard: a stopping server exits in a second or two


@dataclass
class _Lease:
    """This process's use of one server: the lease file it holds locked, and how many users hold it here."""

    handle: IO[str]  # the shared lock lives as long as this descriptor is open
    clients: int


_leases: dict[str, _Lease] = {}  # base -> this process's lease on its server
_leases_lock = threading.Lock()


def beside(base: Path, suffix: str) -> Path:
    return base.with_name(base.name + suffix)


def take_lease(base: Path) -> None:
    """Hold a lease on `base`'s server (once more, if this process holds one already)."""
    key = str(base)
    with _leases_lock:
        if key in _leases:
            _leases[key].clients += 1
            return
        base.parent.mkdir(parents=True, exist_ok=True)
        handle = open(beside(base, ".clients"), "a+")
        # held exclusively only by a server that is stopping, until it exits: wait for that, not for ever
        deadline = time.monotonic() + STOP_WAIT_SECONDS
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    handle.close()
                    raise CairnError(
                        f"the server of {base} has been stopping for over {STOP_WAIT_SECONDS:g} s without exiting "
                        f"(it holds {beside(base, '.clients')}): stop its process, then run the command again"
                    ) from None
                time.sleep(0.05)
        _leases[key] = _Lease(handle, 1)


def release(base: Path) -> None:
    """Give back one lease taken by `take_lease` (the last one drops this process's lock)."""
    with _leases_lock:
        lease = _leases.get(str(base))
        if lease is None:
            return
        lease.clients -= 1
        if lease.clients <= 0:
            lease.handle.close()  # closing the descriptor drops the shared lock
            del _leases[str(base)]


def leases(base: Path) -> int:
    """How many leases this process holds on `base`'s server (0: none)."""
    with _leases_lock:
        lease = _leases.get(str(base))
        return lease.clients if lease else 0


def alive(pid: int) -> bool:
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
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """Whether `pid` has exited and waits for a parent that never reaps it (a container without an init): signal
    0 still reaches it, yet it serves nothing. Read from /proc where there is one."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False  # no /proc (or gone meanwhile): signal 0 said it runs
    return stat[stat.rfind(")") + 2 :].startswith("Z")  # the state follows the command name, which may hold ")"


def running(base: Path) -> dict[str, Any] | None:
    """The record of `base`'s live server, or None."""
    try:
        record = json.loads(beside(base, ".server").read_text())
        pid = int(record["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return record if alive(pid) else None


@dataclass(frozen=True)
class Server:
    """A shared server as `connect` starts it: `name` (for messages), the `command` that runs it, `usable(record)`,
    whether a live server's record can be used (its socket still exists, say), and `why_not()`, the message when
    the command exits before serving."""

    name: str
    command: list[str]
    usable: Callable[[dict[str, Any]], bool]
    why_not: Callable[[], str]


def connect(base: Path, server: Server) -> dict[str, Any]:
    """The record of `base`'s server, started if none runs; the calling process holds a lease on it until
    `release(base)` (once per `connect`) or its exit. Raises CairnError (holding no lease then)."""
    take_lease(base)
    try:
        record = running(base)
        return record if record is not None and server.usable(record) else _start(base, server)
    except BaseException:
        release(base)
        raise


def _start(base: Path, server: Server) -> dict[str, Any]:
    """The record of `base`'s server, started with its command unless another process started one meanwhile."""
    with open(beside(base, ".start"), "a+") as gate:
        fcntl.flock(gate, fcntl.LOCK_EX)
        record = running(base)  # another process may have started it while this one waited
        if record is not None and server.usable(record):
            return record
        beside(base, ".server").unlink(missing_ok=True)
        with open(beside(base, ".server.log"), "ab") as logfile:
            process = subprocess.Popen(
                server.command,
                stdin=subprocess.DEVNULL,
                stdout=logfile,
                stderr=logfile,
                start_new_session=True,  # outlives this process; a terminal's Ctrl-C does not reach it
                close_fds=True,
            )
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            record = running(base)
            if record is not None and server.usable(record):
                return record
            code = process.poll()
            if code not in (None, ALREADY_SERVING) or (code == ALREADY_SERVING and not claimed(base)):
                raise CairnError(server.why_not())  # refused the claim: the server starting wins, while it lives
            time.sleep(0.02)
        process.kill()
        raise CairnError(
            f"{server.name} did not start within {START_TIMEOUT_SECONDS:.0f} s (its log: {beside(base, '.server.log')})"
        )


def stop(base: Path, wait_seconds: float = 30.0) -> int | None:
    """Stop `base`'s server now, whoever uses it (their next call fails): the pid it had, or None when none ran.
    Raises TimeoutError when it is still running after `wait_seconds`."""
    try:
        pid = int(json.loads(beside(base, ".server").read_text())["pid"])
        os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return pid
        time.sleep(0.05)
    raise TimeoutError(f"pid {pid} did not stop within {wait_seconds:.0f} s")


# ---- the server side ----------------------------------------------------------------------------------------


def claim(base: Path) -> IO[str] | None:
    """This process's claim to serve `base`, taken before anything slow: the lock file to keep open for the
    process's life, or None when another live server holds it (then exit with ALREADY_SERVING)."""
    base.parent.mkdir(parents=True, exist_ok=True)
    handle = open(beside(base, ".serving"), "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return handle


def claimed(base: Path) -> bool:
    """Whether a live server holds `base`'s claim (one that died, before serving or not, holds none)."""
    claim_file = claim(base)
    if claim_file is None:
        return True
    claim_file.close()
    return False


def publish(base: Path, record: dict[str, Any]) -> None:
    """Say that this process serves `base` (record: where; its pid is added), atomically."""
    target = beside(base, ".server")
    scratch = target.with_suffix(".tmp")
    scratch.write_text(json.dumps({**record, "pid": os.getpid()}))
    scratch.replace(target)


def unpublish(base: Path) -> None:
    beside(base, ".server").unlink(missing_ok=True)


def wait_idle(base: Path, idle_seconds: float, stopping: threading.Event, valid: Callable[[], bool]) -> IO[str]:
    """Return once no process has held a lease on `base` for `idle_seconds` in a row, `stopping` is set, or
    `valid()` says the server has nothing left to serve. Returns the lease file, locked exclusively when idle:
    keep it open until the process exits, so that a client arriving meanwhile waits for the exit, then starts
    a new server."""
    leases_file = open(beside(base, ".clients"), "a+")
    free_since: float | None = None
    while not stopping.wait(0.5):
        if not valid():
            break
        try:
            fcntl.flock(leases_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            free_since = None
            continue
        free_since = free_since or time.monotonic()
        if time.monotonic() - free_since >= idle_seconds:
            break
        fcntl.flock(leases_file, fcntl.LOCK_UN)
    return leases_file
