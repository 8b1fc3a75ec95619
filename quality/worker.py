"""Where a run's or a report's data-quality checks run: in this user's checks server, which keeps
great-expectations imported between runs (quality/server.py), found or started when the run knows it has rows to
check, so that it warms up while the run discovers, chunks, embeds or reads the rows' figures.

Importing great-expectations costs 3-6 s of one core here. Each run once paid it on its critical path, then in a
worker process of its own started at its beginning (bench/scale.py: about a sixth of a 1%-edit run at 20k pages,
and half of a 1%-edit run at 2k pages, whose work took seconds). A warm server pays it for no run. A process that
already imported great-expectations checks in-process; with no server to be had (it cannot start, dies, or answers
what cannot be read) the checks run in this process: the report is written either way, only later.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cairn.schemas.quality_config import WORKER_IDLE_SECONDS

if TYPE_CHECKING:
    from cairn.quality.report_folder import QualityReport
    from cairn.quality.server import ChecksServer

ReportWriter = Callable[..., "QualityReport"]  # write_report's signature: (frame, config, dim, name, title, scope)


def report_writer(enabled: bool = True, idle_seconds: float = WORKER_IDLE_SECONDS) -> ReportWriter:
    """A `write_report` for checks to come: one through this user's checks server, found or started from now on
    (kept `idle_seconds` after its last run), or, disabled or with great-expectations imported here, the function."""
    from cairn.quality.report_folder import write_report

    if not enabled or "great_expectations" in sys.modules:
        return write_report
    from cairn.quality.server import ChecksServer

    return ServedWriter(ChecksServer(idle_seconds))


@dataclass
class ServedWriter:
    """`write_report` with great-expectations run in the checks server; the server let go once it has written (or
    once this writer is collected, unused: a run with work that wrote nothing)."""

    server: ChecksServer

    def __call__(self, *args: Any) -> QualityReport:
        from cairn.quality.report_folder import checked_by, write_report

        try:
            with checked_by(self.server.validate):
                return write_report(*args)
        finally:
            self.server.close()
