"""flows/steps.py: a step says itself whether it runs as the flow's own code (`in_flow`: the embed step whose
encoder sends its model work out as tasks of its own, on Dask); no runner asks a step's class (PrefectRunner
calls such a step as is: tests/integration/test_prefect_runner.py)."""

from __future__ import annotations

from cairn.flows.steps import IngestSteps, InlineRunner
from cairn.index.memory import InMemoryStore
from cairn.schemas.config import load_config
from tests.conftest import write_config
from tests.encoders import HashingEncoder


def test_the_embed_step_runs_in_the_flow_where_the_runner_is_dask(tmp_path):
    source = {"name": "w", "type": "wiki", "path": str(tmp_path / "wiki"), "tenant": "acme", "acl": ["sre"]}
    config = load_config(write_config(tmp_path / "c.toml", tmp_path / "index", [source]))
    dask = config.model_copy(update={"runner": config.runner.model_copy(update={"kind": "dask"})})
    for cfg, in_flow in ((config, False), (dask, True)):
        steps = IngestSteps.bind(cfg, HashingEncoder(), None, InMemoryStore(), InlineRunner())  # type: ignore[arg-type]
        assert steps.embedder.in_flow is in_flow
        assert not (steps.chunker.in_flow or steps.writer.in_flow or steps.retirer.in_flow)
