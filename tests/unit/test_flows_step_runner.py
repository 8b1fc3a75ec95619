"""flows/steps.py and flows/tasks.py: a step says itself whether it runs as the flow's own code (`in_flow`: the
embed step whose encoder sends its model work out as tasks of its own, on Dask); no runner asks a step's class."""

from __future__ import annotations

from typing import ClassVar

from cairn.flows.steps import IngestSteps, InlineRunner
from cairn.index.memory import InMemoryStore
from cairn.schemas.config import load_config
from tests.conftest import write_config
from tests.encoders import HashingEncoder


class Doubler:
    name: ClassVar[str] = "double"
    retried: ClassVar[bool] = False

    def __init__(self, in_flow: bool) -> None:
        self.in_flow, self.calls = in_flow, 0

    def run(self, value: int) -> int:
        self.calls += 1
        return value * 2


def test_a_step_that_runs_in_the_flow_is_called_as_is_not_made_a_task():
    from cairn.flows.tasks import PrefectRunner  # Prefect: imported by the one test that needs it

    runner, step = PrefectRunner(), Doubler(in_flow=True)
    assert runner.call(step, "w 1/1", 21) == 42 and runner.later(step, "w 1/1", 5)() == 10
    assert step.calls == 2 and runner._tasks == {}  # no Prefect task was made for it


def test_the_embed_step_runs_in_the_flow_where_the_runner_is_dask(tmp_path):
    source = {"name": "w", "type": "wiki", "path": str(tmp_path / "wiki"), "tenant": "acme", "acl": ["sre"]}
    config = load_config(write_config(tmp_path / "c.toml", tmp_path / "index", [source]))
    dask = config.model_copy(update={"runner": config.runner.model_copy(update={"kind": "dask"})})
    for cfg, in_flow in ((config, False), (dask, True)):
        steps = IngestSteps.bind(cfg, HashingEncoder(), None, InMemoryStore(), InlineRunner())  # type: ignore[arg-type]
        assert steps.embedder.in_flow is in_flow
        assert not (steps.chunker.in_flow or steps.writer.in_flow or steps.retirer.in_flow)
