"""Faults made on purpose under a real `cairn ingest`, each followed by the check that nothing was lost: the run goes
on or fails with a clear message, and the next run (then `cairn reconcile`) leaves the index equal to a clean run's.

- the embedded index's server process killed between two batches, and between two sources (as the out-of-memory
  killer would): started anew, the run goes on;
- (more faults below: a full disk under the index folder, a read-only index folder.)

Failpoints (flows/failpoints.py, CAIRN_FAILPOINT_HOLD) pause the run where the fault is made."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cairn.flows.ingest import ingest_flow
from cairn.schemas.config import load_config
from tests.conftest import REPO
from tests.integration import corpus
from tests.integration.test_incremental import make_config, snapshot

HANG_GUARD = 300


@pytest.fixture
def wiki(tmp_path, prefect_server):
    root = tmp_path / "wiki"
    corpus.build(root)
    return root


def cli_env(**extra: str) -> dict[str, str]:
    from prefect.settings import PREFECT_API_URL

    return {**os.environ, "CAIRN_FAILPOINT": "", "PREFECT_API_URL": str(PREFECT_API_URL.value()), **extra}


def cairn(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cairn.cli", *args],
        cwd=REPO,
        env=env or cli_env(),
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
    )


def paused(config: Path, point: str, hold: Path) -> subprocess.Popen:
    """`cairn ingest` started, and waited for until it pauses at `point` (it goes on once `hold` is removed)."""
    run = subprocess.Popen(
        [sys.executable, "-m", "cairn.cli", "ingest", "--config", str(config), "--json"],
        cwd=REPO,
        env=cli_env(CAIRN_FAILPOINT=point, CAIRN_FAILPOINT_HOLD=str(hold)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + HANG_GUARD
    while not hold.exists() and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert hold.exists(), f"the run did not reach {point}: {run.communicate()[1][-2000:]}"
    return run


def clean_snapshot(tmp_path: Path, wiki: Path) -> dict:
    clean = make_config(tmp_path, wiki, index="clean")
    ingest_flow(config_path=str(clean))
    return snapshot(clean)


@pytest.mark.parametrize("point", ["written", "discovered:2"], ids=["between-batches", "between-sources"])
def test_an_index_server_killed_mid_ingest_is_started_anew_and_the_run_goes_on(wiki, tmp_path, point):
    expected = clean_snapshot(tmp_path, wiki)
    config = make_config(tmp_path, wiki, batch_size=1)  # acme's three pages, a batch each; then globex's page
    record = Path(load_config(config).milvus.uri + ".server")
    hold = tmp_path / "hold"
    run = paused(config, point, hold)
    killed = json.loads(record.read_text())["pid"]
    os.kill(killed, signal.SIGKILL)
    hold.unlink()
    out, err = run.communicate(timeout=HANG_GUARD)
    assert run.returncode == 0, err[-3000:]
    report = json.loads(out)
    assert (report["documents"]["indexed"], report["documents"]["failed"]) == (4, 0)
    assert json.loads(record.read_text())["pid"] != killed  # served by a server started anew
    assert snapshot(config) == expected
    reconciled = cairn("reconcile", "--config", str(config), "--json")
    assert reconciled.returncode == 0 and json.loads(reconciled.stdout)["clean"], reconciled.stdout[-3000:]
