"""Every error Cairn raises on purpose, under one root: `except CairnError` catches them all.

Each kind carries the exit code the `cairn` command ends with when that error stops a command, and its
message says what failed and what to do; none ever carries a credential. The CLI prints the message on stderr
(`cairn: ...`, no traceback) and exits with the code; `cairn.cli.exits` is the one place that decides codes
(it may override a kind's code for the command line). Exceptions that are not CairnErrors are bugs: the CLI
lets them through with their traceback.

The `cairn` command's exit codes (README, "Exit codes"):

    0  EXIT_OK        the command did its job (every input of an ingest/backfill indexed, unchanged, skipped as
                      holding nothing to index, or removed)
    1  EXIT_FAILURES  it ran and found failures: documents that failed (in the run report), reconcile drift,
                      a failed data-quality expectation (QualityFailed, `cairn report`), unanswerable batch
                      query lines
    2  EXIT_UNUSABLE  a source failed as a whole (SourcesFailed, after the others ran), or nothing useful ran:
                      arguments (UsageError) or configuration (ConfigError) that cannot be used, the index
                      unreachable, busy, damaged or empty (StoreError)

    CairnError
    ├── ConfigError        the configuration cannot be used (names the file and the key)
    ├── UsageError         a command's or a call's arguments cannot be used
    │   └── FilterError    a query's `filters` argument (names the key and what is allowed)
    ├── SourceError        a whole source is unusable (missing folder, refused token, failed clone)
    ├── DocumentError      [data] one input cannot be read (names it); the run reports it and goes on
    │   ├── NothingToIndex [data] one input holds nothing to index (empty, front matter only): skipped, not failed
    │   └── DocumentRefused [data] a policy refuses one input (an ACL wider than its source grants, no ACL)
    ├── RowError           [data] a document's fields do not fit the collection (names the field); it fails alone
    ├── SourcesFailed      a run ended with some sources failed as a whole (the others ran; carries the report)
    ├── StoreError         the index cannot be used (unreachable, damaged, incompatible)
    │   ├── StorageError   the index or Cairn's files beside it cannot be written (a full disk, a read-only folder)
    │   ├── IndexBusy      another run holds the embedded index's writer lock
    │   ├── NoCollection   nothing ingested yet
    │   └── RetrievalError the query side cannot serve (kept for callers that catch it by this name)
    └── QualityFailed      data-quality expectations failed where the policy says fail (the report is written)

Whether trying again can help is one question with one answer, `fault_of(exc)` (as dlt's TransientException and
TerminalException mixins are read by its retry logic). Each kind carries its `fault`: terminal unless marked
([data] above); errors from outside Cairn are classified there too (pymilvus refusing rows client-side is a
fault of the data; a server restarting, a timeout or an error Cairn does not know is worth another attempt).
The ingest's writes are retried only when it says TRANSIENT (flows/tasks.py), and a store refusing every
document is blamed only when none of the refusals says DATA (flows/steps.py).
"""

from __future__ import annotations

import errno
from enum import Enum
from typing import Any

# The exit-code contract of the `cairn` command (README, "Exit codes").
EXIT_OK = 0
EXIT_FAILURES = 1  # the command ran, and some of what it checked or processed failed
EXIT_UNUSABLE = 2  # nothing useful ran: configuration, arguments, index or a whole source


class Fault(Enum):
    """Whose fault an error is, and so whether the same call can succeed if tried again."""

    TRANSIENT = "transient"  # the service at the other end (a server restarting, a timeout): try again
    DATA = "data"  # the input itself is refused: the same input fails the same way; it fails alone
    TERMINAL = "terminal"  # configuration, arguments, an unusable source or index: fails the same way every time


class CairnError(Exception):
    """The root of Cairn's errors."""

    exit_code = EXIT_UNUSABLE
    fault = Fault.TERMINAL


class ConfigError(CairnError, ValueError):
    """The configuration cannot be used; the message names the file and the key to fix."""


class UsageError(CairnError, ValueError):
    """Arguments that cannot be used (a missing principal, a bad date, an unknown step)."""


class FilterError(UsageError):
    """A `filters` argument the query cannot use; the message names the key and what is allowed."""


class SourceError(CairnError):
    """The whole source is unusable (missing folder, bad credentials); the message says what to fix."""


class DocumentError(CairnError):
    """One input cannot be read; the run reports it and goes on with the rest."""

    exit_code = EXIT_FAILURES
    fault = Fault.DATA

    def __init__(self, locator: str, reason: str) -> None:
        super().__init__(f"{locator}: {reason}")
        self.locator = locator
        self.reason = reason


class NothingToIndex(DocumentError):
    """One input that holds nothing to index: an empty file, a page of front matter only (a Hugo section's
    `_index.md`), a document whose parse leaves no text. The run reports it as skipped with the reason, and
    remembers it by version, so that an unchanged re-run neither reads nor reports it again."""

    exit_code = EXIT_OK


class DocumentRefused(DocumentError):
    """One input a policy refuses (a page granting itself groups its source does not, moving itself to another
    tenant, or left with no ACL): a failure in the run report, and in `cairn reconcile` a document refused by
    policy, not drift."""


class RowError(CairnError, ValueError):
    """A document whose fields do not fit the collection; the message names the field. The document fails
    alone: nothing of it is clipped, embedded or written."""

    exit_code = EXIT_FAILURES
    fault = Fault.DATA


class StoreError(CairnError):
    """The index cannot be used; the message says what to fix."""


class StorageError(StoreError):
    """The index, or a file Cairn keeps beside it (cursors, embedding cache, derived ledger, lock), cannot be
    written: the disk is full, the folder is read-only or not this user's. What was written stays; the run stops
    (every later write would fail the same way) and the next run, once there is room, completes it."""


class IndexBusy(StoreError):
    """Another Cairn run holds the writer lock of an embedded (Milvus Lite) index."""


class NoCollection(StoreError):
    """The collection has not been created yet (no ingest so far)."""


class RetrievalError(StoreError):
    """The index cannot be queried; the message says what to fix."""


class SourcesFailed(CairnError):
    """One or more sources failed as a whole; the others ran and the run report (`report`) says which."""

    def __init__(self, message: str, report: dict[str, Any]) -> None:
        super().__init__(message)
        self.report = report  # the run report as JSON data (RunReport.to_dict())


class QualityFailed(CairnError):
    """Data-quality expectations failed where the policy says fail; the report folder was written."""

    exit_code = EXIT_FAILURES


# Why a write failed, when the reason is the storage under it (errno, then what engines say in their messages).
_STORAGE_ERRNOS = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EFBIG: "a file grew past the size this process may write",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
}
_STORAGE_SQLITE = {
    "SQLITE_FULL": "no space left on the device",
    "SQLITE_READONLY": "the file system is read-only, or the file is not this user's to write",
    "SQLITE_CANTOPEN": "the file cannot be opened for writing (a read-only or missing folder)",
    "SQLITE_IOERR": "the disk failed a write (full, read-only or failing)",
}
_STORAGE_WORDS = {
    "no space left on device": "no space left on the device",
    "disk is full": "no space left on the device",
    "disk quota exceeded": "the disk quota is exceeded",
    "file too large": "a file grew past the size this process may write",
    "read-only file system": "the file system is read-only",
    "readonly database": "the file system is read-only, or the file is not this user's to write",
}


def storage_reason(exc: BaseException) -> str | None:
    """Why `exc` happened, when the storage under a write is the cause (a full disk, a read-only file system, no
    permission), in words; None for anything else. Reads OSError's errno, SQLite's error name, and the words the
    index engine puts in its messages (Milvus Lite reports its own file errors as text)."""
    for cause in _chain(exc):
        if isinstance(cause, OSError) and cause.errno in _STORAGE_ERRNOS:
            return _STORAGE_ERRNOS[cause.errno]
        name = getattr(cause, "sqlite_errorname", None) or ""  # SQLITE_IOERR_WRITE: the kind, then the detail
        kind = next((k for k in _STORAGE_SQLITE if name == k or name.startswith(k + "_")), None)
        if kind is not None:
            return _STORAGE_SQLITE[kind]
        text = str(cause).lower()
        found = next((reason for words, reason in _STORAGE_WORDS.items() if words in text), None)
        if found is not None:
            return found
    return None


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and the exceptions it was raised from or during, at most 10."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(seen) < 10 and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def fault_of(exc: BaseException) -> Fault:
    """Whose fault `exc` is: a CairnError says so itself (`fault`); pymilvus refusing rows in its client-side
    checks, and a ValueError or TypeError, are faults of the data; a bug (a KeyError, an AttributeError...) is
    terminal; anything else that is an Exception (a server restarting, a timeout, a connection dropped) is worth
    another attempt. Writes (flows/tasks.py) and reads (query/retriever.py) ask the same question."""
    if isinstance(exc, CairnError):
        return exc.fault
    if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit: stop, never retry
        return Fault.TERMINAL
    if storage_reason(exc) is not None:  # a full disk or a read-only folder: the same write fails again
        return Fault.TERMINAL
    if isinstance(exc, (LookupError, AttributeError, NameError, AssertionError, ArithmeticError, NotImplementedError)):
        return Fault.TERMINAL  # a bug: the same call fails the same way

    # imported here: the configuration and the error tree load without pymilvus; it is in every install
    from pymilvus.exceptions import DataNotMatchException, DataTypeNotMatchException, ParamError

    if isinstance(exc, (ParamError, DataNotMatchException, DataTypeNotMatchException, ValueError, TypeError)):
        return Fault.DATA
    return Fault.TRANSIENT


def index_down(exc: BaseException) -> bool:
    """Whether a read that raised `exc` says the index cannot answer now, so that a service answers "unavailable"
    and opens the index anew: the index said so itself (a StoreError: no collection, damaged, unreachable) or
    `fault_of` calls the failure transient (the engine restarting, a timeout, a dropped connection). A caller's
    error, data the engine refused and a bug are not the index being down."""
    return isinstance(exc, StoreError) or fault_of(exc) is Fault.TRANSIENT
