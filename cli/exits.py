"""The exit codes of the `cairn` command, mapped in this one module (README, "Exit codes").

A command ends in one of two ways, and both are mapped here:

- it returns an `Outcome`: what it found, in the domain's words (every input indexed, some failed,
  drift, failed checks...); `EXIT_CODES` turns the outcome into the code;
- it raises a `cairn.errors.CairnError`: the code is the error kind's `exit_code` (cairn/errors.py).

To change what a command exits with, change a row of `EXIT_CODES` or an error kind's `exit_code`; no command
returns a number. `cairn.cli.app` is the only caller: its result callback applies `for_outcome`, and `run`
catches the errors and applies `for_error`.
"""

from __future__ import annotations

import logging
import os
import sys
from enum import Enum

from cairn.errors import EXIT_FAILURES, EXIT_OK, EXIT_UNUSABLE, CairnError

__all__ = ["EXIT_FAILURES", "EXIT_OK", "EXIT_UNUSABLE", "Outcome", "for_error", "for_outcome"]


class Outcome(Enum):
    """How a command that ran to its end went."""

    OK = "ok"
    INPUTS_FAILED = "inputs_failed"  # ingest/backfill: some documents failed (the rest was indexed)
    SOURCES_FAILED = "sources_failed"  # ingest/backfill: a source failed as a whole (the others ran)
    DRIFT = "drift"  # reconcile: the collection differs from the sources (after --fix, if given)
    CHECKS_FAILED = "checks_failed"  # report: a data-quality expectation failed
    LINES_FAILED = "lines_failed"  # query --queries: some lines could not be answered


EXIT_CODES: dict[Outcome, int] = {
    Outcome.OK: EXIT_OK,
    Outcome.INPUTS_FAILED: EXIT_FAILURES,
    Outcome.SOURCES_FAILED: EXIT_UNUSABLE,
    Outcome.DRIFT: EXIT_FAILURES,
    Outcome.CHECKS_FAILED: EXIT_FAILURES,
    Outcome.LINES_FAILED: EXIT_FAILURES,
}


def for_outcome(outcome: Outcome | None) -> int:
    """The exit code of a command that returned `outcome` (None: a command with nothing to report, 0)."""
    return EXIT_CODES[outcome] if outcome is not None else EXIT_OK


def for_error(exc: CairnError) -> int:
    """The exit code of a command stopped by `exc`: its kind's own."""
    return exc.exit_code


_finished: list[bool] = []  # set by a command that has nothing left to finish when it returns


def nothing_left_to_finish() -> None:
    """Said by a command that returns with nothing open or pending (no file being written, no worker, no client):
    the console script may then end the process at once (cairn.cli.main)."""
    _finished.append(True)


def finished() -> bool:
    return bool(_finished)


def end_process(code: int) -> None:
    """End the process now with `code`, stdout and stderr flushed and logging's handlers closed, without the
    interpreter's teardown."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can reach it
            pass
    logging.shutdown()
    os._exit(code)
