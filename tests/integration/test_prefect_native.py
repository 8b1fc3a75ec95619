"""What an ingest shows in Prefect: task runs named after their source and batch, a table artifact of
per-source counts, a link to the data-quality report, and a write the store refused as a whole retried (a
CairnError never is)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from cairn.errors import SourcesFailed
from cairn.flows.ingest import ingest_flow
from cairn.index.store import MilvusStore
from cairn.schemas.config import load_config
from tests.conftest import write_config, write_page
from tests.integration.test_ingest_isolation import BODY


def task_runs(run_id: str) -> list:
    """The flow run's task runs once their final states have reached the server."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    with get_client(sync_client=True) as client:
        deadline = time.monotonic() + 300  # a hang guard: it returns as soon as the states are final
        while True:
            runs = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[run_id])))
            if (runs and all(t.state and t.state.is_final() for t in runs)) or time.monotonic() > deadline:
                return runs
            time.sleep(0.5)


def latest_artifact(key: str):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
    from prefect.client.schemas.sorting import ArtifactSort

    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key])), sort=ArtifactSort.CREATED_DESC, limit=1
        )
    return found[0] if found else None


@pytest.mark.core
def test_task_runs_artifacts_and_the_quality_summary_say_what_each_source_did(tmp_path, prefect_server):
    root = tmp_path / "wiki"
    for i in range(3):
        write_page(root, f"page-{i}.md", BODY.format(title=f"Page {i}"))
    config = write_config(
        tmp_path / "c.toml",
        tmp_path / "index",
        [
            {"name": "runbooks", "type": "wiki", "path": str(root), "tenant": "acme", "acl": ["sre"], "batch_size": 2},
            {"name": "gone", "type": "wiki", "path": str(tmp_path / "missing"), "tenant": "acme", "acl": ["sre"]},
        ],
        quality={"on_ingest": True},
    )
    with pytest.raises(SourcesFailed) as failed:
        ingest_flow(config_path=str(config))
    report = failed.value.report

    names = {t.name for t in task_runs(report["run_id"])}
    assert {
        "discover runbooks",
        "parse-and-chunk runbooks 1/2",
        "parse-and-chunk runbooks 2/2",
        "embed runbooks 1/2",
        "write runbooks 1/2",
        "write runbooks 2/2",
        "discover gone",
    } <= names, names

    table = latest_artifact("cairn-run-sources")
    rows = {row["source"]: row for row in _table(table.data)}
    assert rows["runbooks"]["status"] == "ok" and rows["runbooks"]["indexed"] == 3
    assert rows["gone"]["status"] == "failed" and "error" not in rows["gone"]  # too wide for the table: listed
    assert re.search(r"- gone · \(the whole source\): .*does not exist", latest_artifact("cairn-run-report").data)

    quality = latest_artifact("cairn-quality-report")  # the summary inline: Prefect's UI opens no file:// link
    page = Path(report["quality"]["report_dir"], "index.html").resolve()
    assert "| runbooks | " in quality.data and str(page).replace("_", "\\_") in quality.data
    assert "file:" not in quality.data and latest_artifact("cairn-quality-link") is None


def test_a_write_the_store_refuses_as_a_whole_is_retried_and_lands(tmp_path, prefect_server, monkeypatch):
    root = tmp_path / "wiki"
    for name in ("one", "two"):
        write_page(root, f"{name}.md", BODY.format(title=name.title()))
    config = write_config(
        tmp_path / "c.toml",
        tmp_path / "index",
        [
            {"name": "w", "type": "wiki", "path": str(root), "tenant": "acme", "acl": ["sre"]},
        ],
    )
    from pymilvus.exceptions import MilvusException

    upsert, calls = MilvusStore.upsert, []

    def refuse_the_first_attempt(self, rows):  # the batch, then each of its two documents alone: all refused
        calls.append(len(rows))
        if len(calls) <= 3:
            raise MilvusException(code=1, message="server restarting (injected)")
        return upsert(self, rows)

    monkeypatch.setattr(MilvusStore, "upsert", refuse_the_first_attempt)
    report = ingest_flow(config_path=str(config))
    assert report["failures"] == [] and report["documents"]["indexed"] == 2
    (write,) = [t for t in task_runs(report["run_id"]) if t.name.startswith("write ")]
    assert write.run_count == 2 and write.state.is_completed()
    store = MilvusStore(load_config(config).milvus, dim=384)
    store.load()
    try:
        assert len({r.document_id for r in store.iterate("", ["document_id"])}) == 2
    finally:
        store.close()


def _table(data) -> list[dict]:
    import json

    return json.loads(data) if isinstance(data, str) else data
