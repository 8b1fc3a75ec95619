"""What Cairn promises when things go wrong around it: a second writer, a broken source among good ones."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cairn.errors import SourcesFailed
from cairn.flows.ingest import ingest_flow
from tests.conftest import REPO, write_config
from tests.integration import corpus


def test_one_unusable_source_does_not_stop_the_others(tmp_path, prefect_server):
    corpus.build(tmp_path / "wiki")
    config = write_config(
        tmp_path / "c.toml",
        tmp_path / "index",
        [
            {
                "name": "gone",
                "type": "wiki",
                "path": str(tmp_path / "no-such-folder"),
                "tenant": "acme",
                "acl": ["sre"],
                "acl_ceiling": corpus.ACME_GROUPS,
            },
            {
                "name": "good",
                "type": "wiki",
                "path": str(tmp_path / "wiki" / "acme"),
                "tenant": "acme",
                "acl": ["sre"],
                "acl_ceiling": corpus.ACME_GROUPS,
            },
        ],
    )
    with pytest.raises(SourcesFailed, match="source\\(s\\) failed: gone") as failed:  # the flow run fails...
        ingest_flow(config_path=str(config))
    report = failed.value.report  # ...after the other source ran
    assert report["documents"]["indexed"] == 3 and report["per_source"]["good"]["status"] == "ok"
    assert [(f["source"], f["document"]) for f in report["failures"]] == [("gone", "*")]
    assert "does not exist" in report["failures"][0]["error"]


def test_two_ingests_on_one_lite_index_the_second_exits_with_a_clear_message(tmp_path, prefect_server):
    from prefect.settings import PREFECT_API_URL

    corpus.build(tmp_path / "wiki")
    config = write_config(
        tmp_path / "c.toml",
        tmp_path / "index",
        [
            {
                "name": "w",
                "type": "wiki",
                "path": str(tmp_path / "wiki" / "acme"),
                "tenant": "acme",
                "acl": ["sre"],
                "acl_ceiling": corpus.ACME_GROUPS,
            },
        ],
    )
    env = {**os.environ, "CAIRN_FAILPOINT": "", "PREFECT_API_URL": str(PREFECT_API_URL.value())}
    command = [sys.executable, "-m", "cairn.cli", "ingest", "--config", str(config)]
    hold = tmp_path / "hold"  # the first run pauses once its rows are written, holding the writer lock
    first = subprocess.Popen(
        command,
        cwd=REPO,
        env={**env, "CAIRN_FAILPOINT": "written", "CAIRN_FAILPOINT_HOLD": str(hold)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 180
    while not hold.exists() and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert hold.exists(), "the first run did not reach its pause"
    second = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    hold.unlink()
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err[-2000:]
    assert second.returncode == 2, second.stderr[-2000:]
    assert "being written by another Cairn run" in second.stderr
    # and nothing was corrupted: a third run finds everything up to date
    third = subprocess.run([*command, "--json"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert third.returncode == 0 and '"unchanged": 3' in third.stdout


def _truncate_lite_index_files(index_dir) -> int:
    """What a SIGKILL in the middle of Milvus Lite saving a segment's index files leaves behind: the scalar
    ones empty, the vector ones cut short."""
    files = [p for p in (index_dir / "cairn.db").rglob("indexes/*") if p.suffix in (".idx", ".sidx")]
    for path in files:
        data = path.read_bytes()
        path.write_bytes(b"" if path.suffix == ".sidx" else data[: len(data) // 2])
    return len(files)


def test_index_files_cut_short_by_a_killed_run_are_rebuilt_on_the_next_load(tmp_path, prefect_server):
    from cairn.index import liteserver
    from cairn.index.store import MilvusStore
    from cairn.query.retriever import connect
    from cairn.schemas.config import load_config

    corpus.build(tmp_path / "wiki")
    config = write_config(
        tmp_path / "c.toml",
        tmp_path / "index",
        [
            {
                "name": "w",
                "type": "wiki",
                "path": str(tmp_path / "wiki" / "acme"),
                "tenant": "acme",
                "acl": ["sre"],
                "acl_ceiling": corpus.ACME_GROUPS,
            },
        ],
    )
    first = ingest_flow(config_path=str(config))
    milvus = load_config(config).milvus
    store = MilvusStore(milvus, dim=384)
    store.ensure_collection()
    rows = sum(store.reader.counts().values())
    store.close()
    assert first["documents"]["indexed"] == 3 and rows > 0

    liteserver.stop(Path(milvus.uri))  # the engine reads its files again when it next opens the folder
    assert _truncate_lite_index_files(tmp_path / "index") > 0
    again = ingest_flow(config_path=str(config))  # the writer's load repairs them
    assert again["documents"]["unchanged"] == 3 and not again["failures"]

    liteserver.stop(Path(milvus.uri))
    assert _truncate_lite_index_files(tmp_path / "index") > 0
    reader = connect(milvus)  # and so does a reader's
    try:
        assert len(list(reader.iterate("", ["chunk_id"]))) == rows
    finally:
        reader.close()


def test_a_source_past_its_listing_budget_fails_alone_saying_so(tmp_path, prefect_server):
    corpus.build(tmp_path / "wiki")
    acme = {"type": "wiki", "tenant": "acme", "acl": ["sre"], "acl_ceiling": corpus.ACME_GROUPS}
    config = write_config(
        tmp_path / "c.toml",
        tmp_path / "index",
        [
            # a budget spent before its first document is listed (a slow source, in a test's time)
            {**acme, "name": "slow", "path": str(tmp_path / "wiki" / "acme"), "listing_budget_seconds": 1e-9},
            {**acme, "name": "good", "path": str(tmp_path / "wiki" / "acme")},
        ],
    )
    with pytest.raises(SourcesFailed, match="source\\(s\\) failed: slow") as failed:
        ingest_flow(config_path=str(config))
    report = failed.value.report
    assert report["per_source"]["good"]["status"] == "ok" and report["per_source"]["good"]["indexed"] == 3
    assert [(f["source"], f["document"]) for f in report["failures"]] == [("slow", "*")]
    assert report["failures"][0]["error"] == (
        "source 'slow' ran past its listing budget (1e-09 s, listing_budget_seconds) while listing (1 documents "
        "listed): nothing was indexed or removed for it this run"
    )
