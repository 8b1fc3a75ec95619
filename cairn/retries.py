"""The one retry policy of a call the other end refused as a whole (a server restarting, a timeout): how long to
wait before each further attempt, and what is retried, which `cairn.errors.fault_of` decides (transient only).

A run's writes go through it one of two ways, both reading the same policy: inline (`RetryPolicy.call`, a run
without Prefect: flows/steps.py InlineRunner) or as a Prefect task's retries (flows/tasks.py `task_retries`, so
that each attempt shows as a task run). tests/unit/test_retry_policy.py holds both executors to it."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ParamSpec, TypeVar

from cairn.errors import Fault, fault_of

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class RetryPolicy:
    """`delays`: seconds before the 2nd, 3rd... attempt (so 1 + len(delays) attempts at most); a failure is
    retried when `fault_of` says it is transient, never when it would fail the same way again."""

    delays: tuple[float, ...]
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False, repr=False)

    @property
    def attempts(self) -> int:
        return 1 + len(self.delays)

    def retries(self, exc: BaseException) -> bool:
        """Whether a call that raised `exc` is tried again (while delays are left)."""
        return fault_of(exc) is Fault.TRANSIENT

    def call(self, call: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """`call(*args, **kwargs)`, again after each delay while what it raises is retried; the last error."""
        for delay in self.delays:
            try:
                return call(*args, **kwargs)
            except Exception as exc:
                if not self.retries(exc):
                    raise
                self.sleep(delay)
        return call(*args, **kwargs)
