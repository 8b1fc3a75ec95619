"""flows/tasks.py PrefectRunner, built (no flow run, no server): a retried write's task retries as the one retry
policy says (cairn/retries.py; tests/unit/test_retry_policy.py holds the inline runner to the same policy), and a
step that runs as the flow's own code is called as is. Here, not in tests/unit: it imports Prefect; `make test`
runs it (core)."""

from __future__ import annotations

from typing import ClassVar

import pytest
from prefect.states import Failed

from cairn.flows.steps import WRITE_RETRIES
from cairn.flows.tasks import PrefectRunner
from tests.unit.test_retry_policy import FAILURES, IDS, Refused

pytestmark = pytest.mark.core


class Doubler:
    name: ClassVar[str] = "double"
    retried: ClassVar[bool] = False

    def __init__(self, in_flow: bool) -> None:
        self.in_flow, self.calls = in_flow, 0

    def run(self, value: int) -> int:
        self.calls += 1
        return value * 2


@pytest.mark.parametrize("exc, retried", FAILURES, ids=IDS)
def test_a_prefect_write_task_retries_as_the_same_policy_says(exc, retried):
    """The task is built (not run: no server): its retries, delays and condition are the policy's."""
    task = PrefectRunner()._task(Refused(exc))
    assert task.retries == len(WRITE_RETRIES.delays) == WRITE_RETRIES.attempts - 1
    assert task.retry_delay_seconds == list(WRITE_RETRIES.delays)
    assert task.retry_condition_fn(task, None, Failed(data=exc)) is retried is WRITE_RETRIES.retries(exc)


def test_a_step_that_runs_in_the_flow_is_called_as_is_not_made_a_task():
    runner, step = PrefectRunner(), Doubler(in_flow=True)
    assert runner.call(step, "w 1/1", 21) == 42 and runner.later(step, "w 1/1", 5)() == 10
    assert step.calls == 2 and runner._tasks == {}  # no Prefect task was made for it
