"""Named points where a test can have the ingest process killed outright (SIGKILL, no cleanup), to prove
that whatever a crash leaves behind, the next run repairs.

Set CAIRN_FAILPOINT=name (first time the point is reached) or name:N (the N-th time). Unset, a failpoint
costs one dictionary lookup. Points: discovered, chunked, embedded, rows-batch-written, written, retired,
stale-retired. With CAIRN_FAILPOINT_HOLD=FILE the process is paused there instead of killed: it creates FILE
and waits until FILE is removed (what other processes see in the middle of an ingest).
"""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from pathlib import Path

_hits: Counter = Counter()


def failpoint(name: str) -> None:
    wanted = os.environ.get("CAIRN_FAILPOINT")
    if not wanted:
        return
    point, _, nth = wanted.partition(":")
    if point != name:
        return
    _hits[name] += 1
    if _hits[name] != int(nth or 1):
        return
    hold = os.environ.get("CAIRN_FAILPOINT_HOLD")
    if hold:
        Path(hold).touch()
        while Path(hold).exists():
            time.sleep(0.05)
    else:
        os.kill(os.getpid(), signal.SIGKILL)
