"""The data-quality checks in a process of their own, started before they are needed.

Importing great-expectations costs 3-6 s of one core here (its expectation registry pulls in scipy.stats,
altair and sqlalchemy), and every ingest that wrote something, and every `cairn report`, paid it on the
critical path, after the rest of the work (bench/scale.py: about a sixth of a 1%-edit run at 20k pages). A
run or report now asks for `report_writer()` at its start: a spawned process imports great-expectations on
the other core while this one discovers, chunks, embeds or reads the rows' figures, and `write(frame, ...)`
then checks the frame there and writes the report folder (quality/report_folder.py write_report).

The worker is this process's for its life (a daemon: it ends with it), so a long-lived process (a Prefect
worker, a service, a test session) imports great-expectations once, as it did in-process, and a process that
already imported it checks in-process. When the worker cannot start, dies before it answers or answers what
cannot be read, the checks run in this process: the report is written either way, only later. A process forked
from one with a worker starts its own.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cairn.quality.report_folder import QualityReport

log = logging.getLogger(__name__)

ReportWriter = Callable[..., "QualityReport"]  # write_report's signature: (frame, config, dim, name, title, scope)

_worker: _Worker | None = None
_starting = threading.Lock()


def report_writer(enabled: bool = True) -> ReportWriter:
    """A `write_report` for checks to come: this process's worker, started now if it has none (it imports
    great-expectations from now on), or, disabled or with great-expectations imported here, the function."""
    global _worker
    from cairn.quality.report_folder import write_report

    if not enabled or "great_expectations" in sys.modules:
        return write_report
    with _starting:
        if _worker is None or not _worker.usable():
            try:
                _worker = _Worker()
            except Exception as exc:  # noqa: BLE001 - no process to be had (limits, a daemonic parent): check here
                log.warning("the data-quality worker process did not start (%s); checking in this process", exc)
                return write_report
        return _worker.write


class _Worker:
    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")  # no fork of a process with threads and open sockets
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child,), name="cairn-quality", daemon=True)
        self.process.start()
        child.close()
        self.owner = os.getpid()  # a forked child inherits this object, not the worker
        self.lock = threading.Lock()  # one question at a time on the pipe
        self.broken = False

    def usable(self) -> bool:
        return not self.broken and self.owner == os.getpid() and self.process.is_alive()

    def write(self, *args: Any) -> QualityReport:
        from cairn.quality.report_folder import write_report

        try:
            with self.lock:
                self.conn.send(args)
                ok, value = self.conn.recv()
        except Exception as exc:  # noqa: BLE001 - died (killed, out of memory), or its answer would not unpickle
            self.close()
            log.warning("the data-quality worker process failed (%s); checking in this process", exc)
            return write_report(*args)
        except BaseException:  # interrupted mid-question: its answer would be read as the next one's
            self.close()
            raise
        if not ok:
            raise value
        return value

    def close(self) -> None:
        self.broken = True
        self.conn.close()
        if self.owner == os.getpid():
            self.process.kill()
            self.process.join()


def _serve(conn: Connection) -> None:
    """The worker: import great-expectations (the point of starting early), then write each report asked. At a
    lower priority: on two cores the run's model keeps both busy, and the import should take only what is idle
    (not niced, a 1%-edit run at 20k pages gained nothing; niced, about 2 s of its 30). Stopped by SIGTERM (what
    multiprocessing sends a daemon when its parent exits) it exits as a process does, even mid-import: what
    great-expectations' libraries registered with multiprocessing's resource tracker (a semaphore) is released, not
    left behind for the tracker to warn about on the terminal at the parent's exit."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is the command's to answer; it stops this one
    os.nice(10)
    import great_expectations  # noqa: F401

    from cairn.quality.report_folder import write_report

    while True:
        try:
            args = conn.recv()
        except EOFError:
            return
        try:
            conn.send((True, write_report(*args)))
        except Exception as exc:  # noqa: BLE001 - the caller raises it, as if the check had run there
            try:
                pickle.loads(pickle.dumps(exc))  # one the caller could not rebuild fails it: send its text instead
                conn.send((False, exc))
            except Exception:  # noqa: BLE001
                conn.send((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
