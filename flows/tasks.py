"""Ingest steps as Prefect tasks: the one place where a run meets Prefect.

`PrefectHost` is a run hosted by a Prefect flow run (flows/run.py RunHost), and `PrefectRunner` the runner its
steps go through (flows/steps.py `IngestSteps`): each call of a step is a task run of the current flow run, named after
the step and what it works on (`parse-and-chunk wiki 3/12`).
Prefect's quirks are handled here and nowhere else:

- Arguments (documents, rows with their vectors, the ledger) go in Prefect's `quote`: Prefect would
  otherwise walk every element (each row's 2 x 384 floats) looking for futures: 17% of a first ingest.
- A step whose calls are idempotent writes (`Step.retried`) is retried when the store refused it as a whole.
- A write runs in the writer thread (flows/writer.py) inside this flow run's context, as Prefect's own
  runner does, so it is recorded as a task of the run.
- A step whose work goes out as tasks of its own (`Step.in_flow`: the embed step on Dask) runs as the flow's own
  code, so that its encode-texts tasks are submitted from the flow run: a task submitted from inside a task
  carries its parent's parameters (the cache, the documents) to the worker with it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import copy_context
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prefect import Task, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.utilities.annotations import quote as unvisited

import cairn.flows  # noqa: F401  (Prefect defaults before Prefect is imported)
from cairn.flows.steps import WRITE_RETRIES, P, R, Step
from cairn.retries import RetryPolicy

if TYPE_CHECKING:
    from cairn.quality.report_folder import QualityReport
    from cairn.schemas.run_report import RunReport


def task_retries(policy: RetryPolicy) -> dict[str, Any]:
    """`policy` as a Prefect task's options: as many retries, the same delays, and the same rule for what is
    retried (`policy.retries`: a server restarting, a timeout; never bad input or an unusable configuration)."""

    def retried(task, task_run, state) -> bool:
        exc = state.data if isinstance(state.data, BaseException) else state.result(raise_on_failure=False)
        return isinstance(exc, BaseException) and policy.retries(exc)

    return {"retries": len(policy.delays), "retry_delay_seconds": list(policy.delays), "retry_condition_fn": retried}


class PrefectRunner:
    """Each call of a step as a task run of the current flow run; one Prefect task per step, made on first use. A
    step that runs as the flow's own code (`Step.in_flow`: its work goes out as tasks of its own) is called as is."""

    def __init__(self) -> None:
        self._tasks: dict[object, Task] = {}

    def call(self, step: Step[P, R], label: str, *args: P.args, **kwargs: P.kwargs) -> R:
        return self._named(step, label)(*args, **kwargs)

    def later(self, step: Step[P, R], label: str, *args: P.args, **kwargs: P.kwargs) -> Callable[[], R]:
        """The call bound to this flow run's context, for another thread."""
        context, named = copy_context(), self._named(step, label)
        return lambda: context.run(named, *args, **kwargs)

    def _named(self, step: Step[P, R], label: str) -> Callable[P, R]:
        if step.in_flow:
            return step.run
        named = self._task(step).with_options(task_run_name=f"{step.name} {label}")

        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            return named(*(unvisited(arg) for arg in args), **{k: unvisited(v) for k, v in kwargs.items()})

        return call

    def _task(self, step: Step[P, R]) -> Task:
        if step not in self._tasks:
            # Retried steps are idempotent (upserts by deterministic id, deletes by id), so a retry is safe.
            retry = task_retries(WRITE_RETRIES) if step.retried else {}
            self._tasks[step] = task(step.run, name=step.name, cache_policy=NO_CACHE, **retry)
        return self._tasks[step]


@dataclass(frozen=True)
class PrefectHost:
    """The run as a Prefect flow run (flows/run.py RunHost): the flow run's id, its logger, each step a task run of
    it, the run report and the quality summary published as its artifacts (flows/artifacts.py)."""

    run_id: str
    runner: PrefectRunner
    log: Any  # Prefect's run logger

    @classmethod
    def current(cls) -> PrefectHost | None:
        """The flow run this code runs in, if any."""
        from prefect.context import FlowRunContext

        context = FlowRunContext.get()
        if context is None or context.flow_run is None:
            return None
        return cls(str(context.flow_run.id), PrefectRunner(), get_run_logger())

    def publish_run(self, report: RunReport, title: str) -> None:
        from cairn.flows.artifacts import publish_run

        publish_run(report, title)

    def publish_quality(self, result: QualityReport) -> None:
        from cairn.flows.artifacts import publish_quality

        publish_quality(result)
