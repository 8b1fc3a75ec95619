"""How a run shows its progress: decided once per process by whoever starts the run (the CLI), not passed
through every call. The default is silence (a deployment's worker, a test, a library caller)."""
from __future__ import annotations

import sys
from typing import Protocol


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


_factory: type = Silent


def show_progress(enabled: bool) -> None:
    """The process's runs show a bar from now on (or stay silent)."""
    global _factory
    _factory = Bar if enabled else Silent


def start() -> Progress:
    """The progress display for a run that starts now."""
    return _factory()
