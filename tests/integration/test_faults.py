"""Faults made on purpose under a real `cairn ingest`, each followed by the check that nothing was lost: the run goes
on or fails with a clear message, and the next run (then `cairn reconcile`) leaves the index equal to a clean run's.

- the embedded index's server process killed between two batches, and between two sources (as the out-of-memory
  killer would): started anew, the run goes on;
- the disk under the index folder full in the middle of a run, and the index folder read-only (a small tmpfs
  mounted there, skipped where this user may not mount one): the run stops with one line saying so, exit 2; once
  the disk has room again (the folder writable), the next run completes the index.

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
from tests.integration.test_incremental import edit, make_config, snapshot

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


@pytest.fixture
def small_disk(tmp_path):
    """A 64 MB tmpfs mounted at tmp_path/index (the index folder of make_config), unmounted after."""
    from cairn.index import liteserver

    folder = tmp_path / "index"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode(errors='replace').strip()}")
    try:
        yield folder
    finally:
        if (folder / "cairn.db").exists():
            liteserver.stop(folder / "cairn.db")
        subprocess.run(["umount", "-l", str(folder)], check=True)


def fill(folder: Path) -> list[Path]:
    """Files that take every byte left on `folder`'s file system."""
    fillers = []
    for n, block in enumerate((1 << 20, 4096, 64)):
        path = folder / f"filler-{n}"
        fillers.append(path)
        try:
            with open(path, "wb") as handle:
                while True:
                    handle.write(b"\0" * block)
                    handle.flush()
        except OSError:
            pass
    return fillers


def versions_one_and_two(tmp_path: Path, wiki: Path) -> tuple[Path, dict]:
    """The index of tmp_path/index.toml holding version 1 of the corpus, its config then naming version 2 (the
    sources as they are now); and a clean ingest's snapshot of version 2."""
    v1, v2 = tmp_path / "wiki-v1", tmp_path / "wiki-v2"
    subprocess.run(["cp", "-r", str(wiki), str(v1)], check=True)
    edit(wiki)
    subprocess.run(["cp", "-a", str(wiki), str(v2)], check=True)
    expected = clean_snapshot(tmp_path, wiki)
    config = make_config(tmp_path, wiki)

    def holding(version: Path) -> None:  # the same folders (a source pointed at another folder is another source)
        subprocess.run(["rm", "-rf", str(wiki)], check=True)
        subprocess.run(["cp", "-a", str(version), str(wiki)], check=True)  # mtimes kept

    holding(v1)
    ingest_flow(config_path=str(config))
    holding(v2)
    return config, expected


def completed_after_the_fault(config: Path, expected: dict) -> None:
    again = cairn("ingest", "--config", str(config), "--json")
    assert again.returncode == 0, again.stderr[-3000:]
    reconciled = cairn("reconcile", "--config", str(config), "--json")
    assert reconciled.returncode == 0 and json.loads(reconciled.stdout)["clean"], reconciled.stdout[-3000:]
    assert snapshot(config) == expected


def test_a_disk_that_fills_up_mid_run_stops_it_with_one_line_and_the_next_run_completes_it(wiki, tmp_path, small_disk):
    config, expected = versions_one_and_two(tmp_path, wiki)
    hold = tmp_path / "hold"
    run = paused(config, "embedded", hold)  # version 2's first batch embedded, nothing of it written yet
    fillers = fill(small_disk)
    hold.unlink()
    out, err = run.communicate(timeout=HANG_GUARD)
    assert run.returncode == 2, err[-3000:]
    said = [line for line in err.splitlines() if line.startswith("cairn: ")]
    assert said[-1].startswith(
        f"cairn: cannot write the index or Cairn's files beside it (in {small_disk}): no space left on the device ("
    ), err[-3000:]
    assert "make room" in said[-1]
    assert "Traceback" not in err
    for path in fillers:
        path.unlink()
    completed_after_the_fault(config, expected)


def test_a_read_only_index_folder_stops_the_run_with_one_line_and_the_next_run_completes_it(wiki, tmp_path, small_disk):
    from cairn.index import liteserver

    config, expected = versions_one_and_two(tmp_path, wiki)
    liteserver.stop(Path(load_config(config).milvus.uri))  # the next run finds no server: it must start one
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    try:
        failed = cairn("ingest", "--config", str(config), "--json")
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(small_disk)], check=True)
    assert failed.returncode == 2, failed.stderr[-3000:]
    said = [line for line in failed.stderr.splitlines() if line.startswith("cairn: ")]
    assert said and "read-only" in said[-1] and str(small_disk) in said[-1], failed.stderr[-3000:]
    assert "Traceback" not in failed.stderr
    completed_after_the_fault(config, expected)
