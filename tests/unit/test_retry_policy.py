"""One retry policy (cairn/retries.py), two executors: a run without Prefect retries a refused write inline
(`RetryPolicy.call`, flows/steps.py InlineRunner), a Prefect flow run as its task's retries (flows/tasks.py
`task_retries`). Both read the same delays and ask the same question of the same error (`fault_of`); the
Prefect half imports Prefect: tests/integration/test_prefect_runner.py."""

from __future__ import annotations

from typing import ClassVar

import pytest
from pymilvus.exceptions import MilvusException, ParamError

from cairn.errors import ConfigError, DocumentError
from cairn.flows import steps
from cairn.flows.steps import WRITE_RETRIES, InlineRunner
from cairn.retries import RetryPolicy

FAILURES = [
    (MilvusException(code=2, message="server restarting"), True),
    (ConnectionError("refused"), True),
    (TimeoutError("deadline"), True),
    (ParamError(message="invalid row"), False),
    (ValueError("a bad row"), False),
    (ConfigError("c.toml: bad key"), False),
    (DocumentError("a.md", "gone"), False),
    (OSError(28, "No space left on device"), False),
]
IDS = [type(exc).__name__ for exc, _ in FAILURES]


class Refused:
    """A retried step (an idempotent write) the store refuses with `error` every time."""

    name: ClassVar[str] = "write"
    retried: ClassVar[bool] = True
    in_flow: ClassVar[bool] = False

    def __init__(self, error: BaseException) -> None:
        self.error, self.calls = error, 0

    def run(self, value: int) -> int:
        self.calls += 1
        raise self.error


@pytest.mark.parametrize("exc, retried", FAILURES, ids=IDS)
def test_the_inline_runner_waits_the_policys_delays_and_retries_only_what_it_retries(exc, retried, monkeypatch):
    waited: list[float] = []
    policy = RetryPolicy(delays=WRITE_RETRIES.delays, sleep=waited.append)  # the run's delays, not slept
    monkeypatch.setattr(steps, "WRITE_RETRIES", policy)
    step = Refused(exc)
    with pytest.raises(type(exc)):
        InlineRunner().call(step, "w 1/1", 1)
    assert policy.retries(exc) is retried
    assert step.calls == (policy.attempts if retried else 1)
    assert waited == (list(WRITE_RETRIES.delays) if retried else [])


def test_a_call_that_lands_on_a_later_attempt_returns_its_answer():
    answers = iter([ConnectionError("restarting"), ConnectionError("restarting"), 42])

    def flaky() -> int:
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert RetryPolicy(delays=(0, 0), sleep=lambda s: None).call(flaky) == 42
