"""The local Prefect server of flows/prefect_server.py, as `cairn` from a shell meets it with no PREFECT_API_URL and
`[runner] local_prefect_server = true`: started by the first run with work, found warm by the next, every run
recorded in it, stopped once idle."""

from __future__ import annotations

import json
import time

from cairn import daemon
from cairn.flows import prefect_server
from tests.integration import corpus
from tests.integration.test_cli import cairn, recorded_flow_run

IDLE_SECONDS = 30  # longer than the gap between two runs: a process start and its imports, on a busy machine


def test_runs_share_one_warm_prefect_server_that_records_them_and_stops_when_idle(tmp_path):
    root, config = corpus.acme_wiki(tmp_path)
    with config.open("a") as handle:
        handle.write(f"[runner]\nlocal_prefect_server = true\nprefect_idle_seconds = {IDLE_SECONDS}\n")
    home = tmp_path / "prefect-home"
    base = prefect_server.base(home)
    env = {"PREFECT_HOME": str(home)}
    try:
        first = cairn("ingest", "--config", str(config), "--json", env=env)
        assert first.returncode == 0, first.stderr
        server = daemon.running(base)
        assert server is not None, "the run left no local Prefect server for the next"
        page = sorted(root.rglob("*.md"))[0]
        page.write_text(page.read_text() + "\nOne more line.\n")
        second = cairn("ingest", "--config", str(config), "--json", env=env)
        assert second.returncode == 0, second.stderr
        assert (daemon.running(base) or {}).get("pid") == server["pid"]  # found warm, not started again
        runs = [json.loads(r.stdout)["run_id"] for r in (first, second)]
        assert {recorded_flow_run(home, r)["state_type"] for r in runs} == {"COMPLETED"}

        deadline = time.monotonic() + 300  # a hang guard: it stops IDLE_SECONDS after the last run let go
        while daemon.alive(server["pid"]) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not daemon.alive(server["pid"]), "the local Prefect server outlived its idle time"
        assert daemon.running(base) is None and not daemon.beside(base, ".server").exists()
    finally:
        prefect_server.stop(home)
