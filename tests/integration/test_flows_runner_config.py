"""[runner]: which Prefect task runner a config gives (built, not started: no cluster here). Here, not in
tests/unit: it imports Prefect and Dask; `make test` still runs it (core). And the encoder a Dask run's model work
goes through (flows/dask_runner.py RunnerEncoder) is an Encoder (from tests/unit/test_embedding_protocol.py)."""

import pytest
from prefect.task_runners import ThreadPoolTaskRunner
from prefect_dask import DaskTaskRunner

from cairn.flows.dask_runner import configured, task_runner
from cairn.schemas.config import ConfigError, parse_config

pytestmark = pytest.mark.core


def test_default_is_the_thread_pool():
    config = parse_config({})
    assert config.runner.kind == "thread" and config.runner.address is None
    runner = task_runner(config.runner)
    assert isinstance(runner, ThreadPoolTaskRunner) and runner._max_workers == config.runner.workers


def test_dask_local_cluster_of_n_workers_on_loopback():
    runner = task_runner(parse_config({"runner": {"kind": "dask", "workers": 3}}).runner)
    assert isinstance(runner, DaskTaskRunner) and runner.address is None
    kwargs = runner.cluster_kwargs
    assert kwargs["n_workers"] == 3 and kwargs["processes"] is True and kwargs["host"] == "127.0.0.1"
    assert kwargs["dashboard_address"] is None and int(kwargs["env"]["CAIRN_TORCH_THREADS"]) >= 1
    threads = task_runner(parse_config({"runner": {"kind": "dask", "processes": False}}).runner)
    assert threads.cluster_kwargs["processes"] is False and "env" not in threads.cluster_kwargs


def test_dask_existing_scheduler_by_address():
    runner = task_runner(parse_config({"runner": {"kind": "dask", "address": "tcp://dask-scheduler:8786"}}).runner)
    assert isinstance(runner, DaskTaskRunner) and runner.address == "tcp://dask-scheduler:8786"


def test_bad_runner_settings_are_named():
    with pytest.raises(ConfigError, match='set kind = "dask"'):
        parse_config({"runner": {"address": "tcp://x:8786"}})
    with pytest.raises(ConfigError, match="scheduler address like tcp://"):
        parse_config({"runner": {"kind": "dask", "address": "dask-scheduler:8786"}})
    with pytest.raises(ConfigError, match=r"runner\.kind"):
        parse_config({"runner": {"kind": "ray"}})
    with pytest.raises(ConfigError, match=r"runner\.workers"):
        parse_config({"runner": {"workers": 0}})


def test_the_cli_runs_a_flow_on_the_configured_runner():
    from cairn.flows.ingest import ingest_flow

    flow = configured(ingest_flow, parse_config({"runner": {"kind": "dask", "workers": 2}}))
    assert isinstance(flow.task_runner, DaskTaskRunner) and flow.name == ingest_flow.name


def test_the_task_runner_encoder_is_an_encoder():
    from cairn.embedding import Encoder, load_encoder
    from cairn.flows.dask_runner import RunnerEncoder

    runner = ThreadPoolTaskRunner()  # not started: building the encoder submits nothing
    runner_encoder = RunnerEncoder.around(load_encoder("all-MiniLM-L6-v2", "torch"), runner=runner, parts=2)
    assert isinstance(runner_encoder, Encoder) and runner_encoder.identity == "all-MiniLM-L6-v2/seq256/d384"
