"""Every error Cairn raises on purpose, under one root: `except CairnError` catches them all.

Each kind carries the exit code the `cairn` command ends with when that error stops a command, and its
message says what failed and what to do; none ever carries a credential. The CLI prints the message on stderr
(`cairn: ...`, no traceback) and exits with the code; `cairn.cli.exits` is the one place that decides codes
(it may override a kind's code for the command line). Exceptions that are not CairnErrors are bugs: the CLI
lets them through with their traceback.

The `cairn` command's exit codes (README, "Exit codes"):

    0  EXIT_OK        the command did its job (every input of an ingest/backfill indexed, unchanged or removed)
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
    ├── DocumentError      one input cannot be read (names it); the run reports it and goes on
    ├── SourcesFailed      a run ended with some sources failed as a whole (the others ran; carries the report)
    ├── StoreError         the index cannot be used (unreachable, damaged, incompatible)
    │   ├── IndexBusy      another run holds the embedded index's writer lock
    │   ├── NoCollection   nothing ingested yet
    │   └── RetrievalError the query side cannot serve (kept for callers that catch it by this name)
    └── QualityFailed      data-quality expectations failed where the policy says fail (the report is written)
"""
from __future__ import annotations

# The exit-code contract of the `cairn` command (README, "Exit codes").
EXIT_OK = 0
EXIT_FAILURES = 1  # the command ran, and some of what it checked or processed failed
EXIT_UNUSABLE = 2  # nothing useful ran: configuration, arguments, index or a whole source


class CairnError(Exception):
    """The root of Cairn's errors."""

    exit_code = EXIT_UNUSABLE


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

    def __init__(self, locator: str, reason: str) -> None:
        super().__init__(f"{locator}: {reason}")
        self.locator = locator
        self.reason = reason


class StoreError(CairnError):
    """The index cannot be used; the message says what to fix."""


class IndexBusy(StoreError):
    """Another Cairn run holds the writer lock of an embedded (Milvus Lite) index."""


class NoCollection(StoreError):
    """The collection has not been created yet (no ingest so far)."""


class RetrievalError(StoreError):
    """The index cannot be queried; the message says what to fix."""


class SourcesFailed(CairnError):
    """One or more sources failed as a whole; the others ran and the run report (`report`) says which."""

    def __init__(self, message: str, report: dict) -> None:
        super().__init__(message)
        self.report = report


class QualityFailed(CairnError):
    """Data-quality expectations failed where the policy says fail; the report folder was written."""

    exit_code = EXIT_FAILURES
