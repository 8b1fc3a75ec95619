"""What the caller asks of a run beyond the configuration: a cleanup mode, a backfill window, how long to queue."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Cleanup = Literal["incremental", "full", "none"]  # a source's cleanup mode (schemas/source_config.py)


@dataclass
class Window:
    """A backfill's time window over updated_at (epoch seconds, either end open; both open = everything)."""

    since: int | None = None
    until: int | None = None
    commits: int | None = None  # history backfill: versions written by the last N changes (git commits)

    def __contains__(self, when: int) -> bool:
        return (self.since is None or when >= self.since) and (self.until is None or when < self.until)


@dataclass(frozen=True)
class RunOptions:
    """What the caller asked of this run, beyond the configuration."""

    cleanup: Cleanup | None = None  # None: each source's own mode
    backfill: Window | None = None  # re-process the documents in this window (an open window: all of them)
    wait_seconds: float = 0.0  # how long to queue behind another run holding an embedded index
    allow_mass_delete: bool = False  # remove what a source no longer yields even past its max_delete_share
    title: str = "Cairn ingest"
