"""One writer per Milvus Lite index: an advisory lock file beside it.

Milvus Lite is a single-process engine; two Cairn runs writing one file would corrupt each other's view of
what is indexed. A second run waits up to `wait_seconds`, then exits with a message naming the holder.
On a Milvus server the lock is not needed for correctness of a single writer per source, and is skipped.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cairn.errors import IndexBusy
from cairn.schemas.config import MilvusConfig


@contextmanager
def writer_lock(config: MilvusConfig, wait_seconds: float = 0.0) -> Iterator[None]:
    if not config.is_lite:
        yield
        return
    path = Path(config.uri).with_suffix(".lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+")
    deadline = time.monotonic() + max(0.0, wait_seconds)
    try:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    handle.seek(0)
                    holder = handle.read().strip() or "unknown"
                    raise IndexBusy(
                        f"index {config.uri} is being written by another Cairn run (pid {holder}); "
                        "wait for it to finish, or pass --wait SECONDS to queue behind it"
                    ) from None
                time.sleep(0.2)
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        yield
    finally:
        handle.close()  # closing the descriptor releases the lock, also when the process is killed
