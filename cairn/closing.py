"""A resource that `close()` releases, used in a `with` block that closes it on the way out (the index's
connection, reader and derived ledger)."""

from __future__ import annotations

from typing import Self


class Closing:
    """`with resource:` closes it at the end of the block, however the block ends; a subclass defines `close`."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
