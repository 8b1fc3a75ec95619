"""Why the service could not answer a question it accepted (both a 503 with the reason), and the one shape every
transport gives a refusal: one line, bounded.

The error mapping every transport shares: a `cairn.errors.UsageError` is the caller's (HTTP 400, an MCP tool
error, exit 2 on the command line), Unavailable the index's or the worker's (503, a tool error), anything else a
bug (500, a tool error saying so, its traceback in the log only)."""

from __future__ import annotations

REASON_CHARS = 300  # a refusal's reason is one line, at most this long


def one_line(reason: str) -> str:
    """`reason` on one line (every run of whitespace, newlines included, one space), at most REASON_CHARS."""
    return " ".join(reason.split())[:REASON_CHARS]


class Unavailable(Exception):
    """The index cannot answer now. `index_down`: the index failed (not merely slow)."""

    def __init__(self, reason: str, index_down: bool = False) -> None:
        super().__init__(reason)
        self.index_down = index_down


class Busy(Unavailable):
    """The worker could not give the question its turn before its deadline (the index may be fine)."""


class ScrapesWaiting(Exception):
    """Too many scrapes of /metrics wait for their turn in this worker (answered 429 at once)."""
