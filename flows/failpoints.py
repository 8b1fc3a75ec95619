"""Named points where a test can have the ingest process killed outright (SIGKILL, no cleanup), to prove
that whatever a crash leaves behind, the next run repairs.

Set CAIRN_FAILPOINT=name (first time the point is reached) or name:N (the N-th time). Unset, a failpoint
costs one dictionary lookup. Points: discovered, chunked, embedded, rows-batch-written, written, retired,
stale-retired.
"""
from __future__ import annotations

import os
import signal
from collections import Counter

_hits: Counter = Counter()


def failpoint(name: str) -> None:
    wanted = os.environ.get("CAIRN_FAILPOINT")
    if not wanted:
        return
    point, _, nth = wanted.partition(":")
    if point != name:
        return
    _hits[name] += 1
    if _hits[name] == int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)
