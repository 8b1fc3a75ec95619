"""deploy/prefect.yaml against a real Prefect server: deploy --all, a process worker, a flow run per deployment.

Everything runs on 127.0.0.1 in subprocesses with their own PREFECT_HOME and SQLite database under tmp_path;
each is started in its own process group and the whole group is killed afterwards, whatever happened.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import REPO, free_port, sample_copy

PREFECT = [sys.executable, "-m", "prefect"]
FINAL = {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}


def scratch_config(tmp_path: Path) -> Path:
    """data/cairn.toml as it is (same sources, same settings) in a copy of data/ under tmp_path, where its index,
    caches and reports land; data-quality checks at ingest are left to the report deployment."""
    path = sample_copy(tmp_path)
    text = path.read_text(encoding="utf-8").replace("[quality]\n", "[quality]\non_ingest = false\n", 1)
    path.write_text(text, encoding="utf-8")
    return path


def stop(process: subprocess.Popen | None) -> None:
    """SIGTERM then SIGKILL to the process group (the worker's flow-run subprocesses, the server's services)."""
    if process is None or process.poll() is not None and not _group_alive(process.pid):
        return
    for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            continue
        if not _group_alive(process.pid):
            return
        time.sleep(0.5)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def tail(path: Path, chars: int = 3000) -> str:
    return path.read_text(errors="replace")[-chars:] if path.exists() else ""


@pytest.fixture
def prefect_stack(tmp_path):
    """A Prefect server on a free loopback port, the process work pool, and the deployments registered."""
    port = free_port()
    home = tmp_path / "prefect-home"
    home.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")},
        "PREFECT_HOME": str(home),
        "PREFECT_API_URL": f"http://127.0.0.1:{port}/api",
        "PREFECT_API_DATABASE_CONNECTION_URL": f"sqlite+aiosqlite:///{tmp_path}/prefect.db",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_UI_ENABLED": "false",
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "PREFECT_SERVER_LOGGING_LEVEL": "WARNING",
        "PREFECT_WORKER_QUERY_SECONDS": "1",
        "PREFECT_RESULTS_LOCAL_STORAGE_PATH": str(tmp_path / "results"),
        "DO_NOT_TRACK": "1",
        "PYTHONPATH": str(REPO),  # this checkout's code, in the server, the CLI, the worker and its flow runs
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "CAIRN_HOME": str(REPO),  # the pull step's working directory
        "CAIRN_FAILPOINT": "",
    }
    logs = {name: tmp_path / f"{name}.log" for name in ("server", "worker")}
    processes: dict[str, subprocess.Popen] = {}

    def start(name: str, *args: str) -> None:
        processes[name] = subprocess.Popen(
            [*PREFECT, *args],
            cwd=REPO,
            env=env,
            stdout=logs[name].open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, killed whole in the finally below
        )

    def cli(*args: str, timeout: float = 120) -> str:
        done = subprocess.run([*PREFECT, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, f"prefect {' '.join(args)}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done.stdout

    try:
        start("server", "server", "start", "--host", "127.0.0.1", "--port", str(port))
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback, never a proxy
        deadline = time.monotonic() + 600  # a hang guard: a slow machine took 4 min
        while True:
            assert processes["server"].poll() is None, f"prefect server exited:\n{tail(logs['server'])}"
            try:
                with opener.open(f"{env['PREFECT_API_URL']}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, f"prefect server not healthy after 600 s:\n{tail(logs['server'])}"
            time.sleep(0.5)
        cli("work-pool", "create", "cairn-process", "--type", "process")
        cli("--no-prompt", "deploy", "--all", "--prefect-file", "deploy/prefect.yaml", timeout=180)
        start("worker", "worker", "start", "--pool", "cairn-process", "--limit", "1")
        yield env, start, processes, logs
    finally:
        for name in ("worker", "server"):
            stop(processes.get(name))


def api(env: dict, call):
    """Run `call(client)` against the stack's server from this process."""
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    async def go():
        with temporary_settings({PREFECT_API_URL: env["PREFECT_API_URL"]}):
            async with get_client() as client:
                return await call(client)

    return asyncio.run(go())


def run_deployment(env: dict, name: str, parameters: dict, processes: dict, logs: dict, timeout: float = 240):
    async def create(client):
        deployment = await client.read_deployment_by_name(name)
        return (await client.create_flow_run_from_deployment(deployment.id, parameters=parameters)).id

    flow_run_id = api(env, create)
    deadline = time.monotonic() + timeout
    while True:

        async def read(client):
            return await client.read_flow_run(flow_run_id)

        run = api(env, read)
        if run.state and run.state.type.value in FINAL:
            break
        assert processes["worker"].poll() is None, f"worker exited:\n{tail(logs['worker'])}"
        assert time.monotonic() < deadline, (
            f"{name} still {run.state.type.value} after {timeout} s:\n{tail(logs['worker'])}"
        )
        time.sleep(1)
    assert run.state.type.value == "COMPLETED", f"{name}: {run.state.message}\n{tail(logs['worker'])}"
    return run


def test_deployments_run_on_a_process_worker_and_rows_land_in_the_index(tmp_path, prefect_stack):
    env, _, processes, logs = prefect_stack
    config = scratch_config(tmp_path)

    async def deployments(client):
        return await client.read_deployments()

    registered = api(env, deployments)
    by_name = {d.name: d for d in registered}
    # one ingest per configured source (nightly, in a timezone), the backfill and the report, on the one pool
    assert set(by_name) == {"runbooks", "globex-wiki", "incidents", "contracts", "infra", "backfill", "nightly"}
    assert {d.work_pool_name for d in registered} == {"cairn-process"}
    runbooks = by_name["runbooks"]
    assert runbooks.parameters["source"] == "runbooks"
    assert [(s.schedule.cron, s.schedule.timezone) for s in runbooks.schedules] == [("0 2 * * *", "Europe/London")]
    assert not by_name["backfill"].schedules

    run_deployment(env, "cairn-ingest/runbooks", {"config_path": str(config)}, processes, logs)

    from cairn.index.store import MilvusStore
    from cairn.schemas.config import load_config

    milvus = load_config(config).milvus
    assert Path(milvus.uri).is_relative_to(tmp_path)
    store = MilvusStore(milvus, dim=384)
    try:
        store.load()
        rows = list(store.iterate("", ["chunk_id", "source_name", "locator", "chunk_type"]))
    finally:
        store.close()
    pages = {p.relative_to(REPO / "data/wiki/acme").as_posix() for p in (REPO / "data/wiki/acme").rglob("*.md")}
    assert rows and {r.source_name for r in rows} == {"runbooks"}  # only the deployment's source
    assert {r.locator for r in rows} == pages
    assert {r.chunk_type for r in rows} == {"full_text", "child"}

    # the quality report deployment over what the ingest wrote (fails its run if an expectation fails)
    run_deployment(env, "cairn-report/nightly", {"config_path": str(config), "source": "runbooks"}, processes, logs)
    reports = load_config(config).quality.report_dir  # data/reports of the copy
    summaries = [p for p in Path(reports).glob("*/summary.json") if not p.parent.is_symlink()]
    assert len(summaries) == 1 and json.loads(summaries[0].read_text())["success"] is True
    assert (Path(reports) / "latest").resolve() == summaries[0].parent.resolve()
