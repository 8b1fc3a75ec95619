"""How a run shows its progress: decided once per process by whoever starts the run (the CLI), not passed
through every call: a bar at a terminal, a line every few seconds on stderr otherwise (cron, CI, a worker's
log), nothing under --quiet. The default is silence (a deployment's worker, a test, a library caller)."""

from __future__ import annotations

import sys
import time
from typing import Literal, Protocol


class Progress(Protocol):
    def update(self, source: str, done: int, total: int) -> None:
        """`done` of `total` documents of `source` are through."""

    def close(self) -> None:
        """The run ended."""


class Silent:
    def update(self, source: str, done: int, total: int) -> None:
        pass

    def close(self) -> None:
        pass


class Bar:
    """A progress bar on stderr (a terminal)."""

    def __init__(self) -> None:
        from tqdm import tqdm

        self._bar = tqdm(desc="documents", unit="doc", file=sys.stderr)

    def update(self, source: str, done: int, total: int) -> None:
        self._bar.set_description(source)
        self._bar.total = total
        self._bar.n = done
        self._bar.refresh()

    def close(self) -> None:
        self._bar.close()


class Lines:
    """Where no one watches a bar: one line on stderr when a source's work is known (`0/N documents`, before
    anything of it is parsed or embedded), one per source's end, and at most one every `every` seconds in between,
    with the rate and the time left at that rate."""

    def __init__(self, every: float = 15.0) -> None:
        self.every = every
        self.started = self.last = time.monotonic()

    def update(self, source: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done == 0:  # the source's work, as soon as it is known (nothing to index: nothing to say)
            if total:
                print(f"cairn: {source}: 0/{total} documents to index", file=sys.stderr, flush=True)
            return
        if done < total and now - self.last < self.every:
            return
        self.last = now
        rate = done / max(now - self.started, 1e-6)
        left = f", about {(total - done) / rate:.0f} s left" if done < total and rate > 0 else ""
        print(f"cairn: {source}: {done}/{total} documents ({rate:.1f}/s{left})", file=sys.stderr, flush=True)

    def close(self) -> None:
        pass


ProgressKind = Literal["bar", "lines", "off"]
_factory: type = Silent
_KINDS: dict[ProgressKind, type] = {"bar": Bar, "lines": Lines, "off": Silent}


def set_progress_display(kind: ProgressKind) -> None:
    """How the process's runs show progress from now on: a "bar", "lines" or nothing ("off")."""
    global _factory
    _factory = _KINDS[kind]


def start() -> Progress:
    """The progress display for a run that starts now."""
    return _factory()
