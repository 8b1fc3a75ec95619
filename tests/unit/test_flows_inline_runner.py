"""flows.steps.InlineRunner, the runner of a run with no Prefect (flows/run.py InlineHost): a write the store
refused as a whole is retried as the Prefect task would retry it, and nothing else is."""

from __future__ import annotations

from typing import ClassVar

import pytest

from cairn.errors import DocumentError
from cairn.flows import steps
from cairn.flows.steps import InlineRunner
from cairn.retries import RetryPolicy


class Flaky:
    """A step that fails `failures` times with `error`, then answers."""

    name: ClassVar[str] = "write"

    def __init__(self, error: Exception, failures: int, retried: bool = True) -> None:
        self.error, self.failures, self.retried, self.calls = error, failures, retried, 0

    def run(self, value: int) -> int:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return value * 2


@pytest.fixture(autouse=True)
def no_waits(monkeypatch):
    monkeypatch.setattr(steps, "WRITE_RETRIES", RetryPolicy(delays=(0, 0)))


def test_a_write_the_store_refused_as_a_whole_is_retried_until_it_lands():
    step = Flaky(ConnectionError("the server is restarting"), failures=2)
    assert InlineRunner().call(step, "w 1/1", 21) == 42 and step.calls == 3
    later = Flaky(TimeoutError("deadline"), failures=1)
    assert InlineRunner().later(later, "w 1/1", 5)() == 10 and later.calls == 2  # in the writer thread, the same


def test_retries_end_after_the_last_delay_with_the_stores_error():
    step = Flaky(ConnectionError("down for good"), failures=10)
    with pytest.raises(ConnectionError, match="down for good"):
        InlineRunner().call(step, "w 1/1", 1)
    assert step.calls == steps.WRITE_RETRIES.attempts


@pytest.mark.parametrize(
    "error",
    [ValueError("a bad row"), DocumentError("page.md", "a bad document"), OSError(28, "No space left on device")],
)
def test_what_fails_the_same_way_every_time_is_not_retried(error):
    step = Flaky(error, failures=1)
    with pytest.raises(type(error)):
        InlineRunner().call(step, "w 1/1", 1)
    assert step.calls == 1


def test_a_step_that_is_not_an_idempotent_write_is_never_retried():
    step = Flaky(ConnectionError("the server is restarting"), failures=1, retried=False)
    with pytest.raises(ConnectionError):
        InlineRunner().call(step, "parse 1/1", 1)
    assert step.calls == 1
