"""deploy/prefect.yaml read with Prefect (imported, nothing started): its entrypoints load to the flows with the
parameters named, and one nightly ingest per configured source. From tests/unit/test_deploy_files.py, which reads
the rest of deploy/ without Prefect; `make test` runs these (core)."""

from __future__ import annotations

import inspect
import zoneinfo

import pytest
import yaml

from cairn.schemas.config import load_config
from tests.conftest import REPO
from tests.unit.test_deploy_files import DEPLOY, by_entrypoint

pytestmark = pytest.mark.core


@pytest.fixture(scope="module")
def prefect_yaml() -> dict:
    return yaml.safe_load((DEPLOY / "prefect.yaml").read_text(encoding="utf-8"))


def test_every_entrypoint_loads_to_a_flow_that_takes_the_parameters_named(prefect_yaml, monkeypatch):
    from prefect import Flow
    from prefect.flows import load_flow_from_entrypoint

    monkeypatch.chdir(REPO)  # config paths are relative to the repository root, as on the worker
    names = [d["name"] for d in prefect_yaml["deployments"]]
    assert len(names) == len(set(names))
    for deployment in prefect_yaml["deployments"]:
        module, _, attribute = deployment["entrypoint"].partition(":")
        assert module.startswith("cairn.flows."), deployment["entrypoint"]  # installed modules, not file paths
        flow = load_flow_from_entrypoint(deployment["entrypoint"])
        assert isinstance(flow, Flow), deployment["entrypoint"]
        accepted = set(inspect.signature(flow.fn).parameters)
        unknown = set(deployment.get("parameters") or {}) - accepted
        assert not unknown, f"{deployment['name']}: {attribute} has no parameter(s) {sorted(unknown)}"
        config = (deployment.get("parameters") or {}).get("config_path")
        if config:
            load_config(REPO / config)  # the config it names exists and is valid


def test_one_nightly_ingest_per_configured_source(prefect_yaml):
    from prefect.client.schemas.schedules import CronSchedule

    configured = {s.name for s in load_config(REPO / "data/cairn.toml").sources}
    ingests = by_entrypoint(prefect_yaml, "cairn.flows.ingest:ingest_flow")
    assert sorted(d["parameters"]["source"] for d in ingests) == sorted(configured)
    for deployment in ingests:
        assert deployment["parameters"]["config_path"] == "data/cairn.toml"
        assert deployment["name"] == deployment["parameters"]["source"]
        [schedule] = deployment["schedules"]
        zoneinfo.ZoneInfo(schedule["timezone"])  # a real IANA zone
        CronSchedule(cron=schedule["cron"], timezone=schedule["timezone"])  # Prefect's own validation
        minute, hour, day, month, weekday = schedule["cron"].split()
        assert (day, month, weekday) == ("*", "*", "*") and hour.isdigit(), "nightly: once a day at a fixed hour"
