"""Why the service could not answer a question it accepted: both are a 503 with the reason."""

from __future__ import annotations


class Unavailable(Exception):
    """The index cannot answer now. `index_down`: the index failed (not merely slow)."""

    def __init__(self, reason: str, index_down: bool = False) -> None:
        super().__init__(reason)
        self.index_down = index_down


class Busy(Unavailable):
    """The worker could not give the question its turn before its deadline (the index may be fine)."""
