"""The PagerDuty source against a real HTTP server on 127.0.0.1 and through the real ingest flow."""

from __future__ import annotations

import copy
import json
import shutil
from dataclasses import asdict

import pytest

from cairn.errors import SourcesFailed
from cairn.flows.ingest import ingest_flow
from cairn.index.store import MilvusStore
from cairn.schemas.config import load_config
from cairn.schemas.run_report import DocumentCounts
from tests.conftest import REPO, write_config
from tests.pagerduty_server import TOKEN, FakePagerDuty

SAMPLE = REPO / "data" / "pagerduty"


def sample() -> tuple[list[dict], dict]:
    incidents = json.loads((SAMPLE / "incidents.json").read_text())["incidents"]
    parts = {
        i["id"]: {
            p: json.loads((SAMPLE / i["id"] / f"{p}.json").read_text())[p] for p in ("log_entries", "notes", "alerts")
        }
        for i in incidents
    }
    return incidents, parts


def api_config(tmp_path, url, **extra):
    source = {
        "name": "pd",
        "type": "pagerduty",
        "api_url": url,
        "token_env": "CAIRN_TEST_PD_TOKEN",
        "tenant": "acme",
        "acl": ["sre"],
        "page_size": 2,
        "retry_base_seconds": 0.01,
        **extra,
    }
    return write_config(tmp_path / "pd.toml", tmp_path / "index", [source])


def stored_rows(config_path) -> list[dict]:
    store = MilvusStore(load_config(config_path).milvus, dim=384)
    store.ensure_collection()
    try:
        return list(store.iterate("", ["chunk_id", "locator", "text", "extra", "tenant_id", "temporal_end"]))
    finally:
        store.close()


@pytest.fixture
def token(monkeypatch):
    monkeypatch.setenv("CAIRN_TEST_PD_TOKEN", TOKEN)


@pytest.mark.core
def test_api_pagination_retries_and_incremental_high_water_mark(tmp_path, prefect_server, token):
    incidents, parts = sample()
    with FakePagerDuty(incidents, parts) as api:
        api.faults["/incidents"] = [429, 500, "truncate"]  # each retried, then the real pages
        config = api_config(tmp_path, api.url)
        first = ingest_flow(config_path=str(config))
        assert first["documents"] == asdict(DocumentCounts(seen=6, indexed=6)), first["failures"]
        listing = [q for p, q in api.requests if p == "/incidents"]
        assert len(listing) == 3 + 3  # three faults, then three pages of two
        assert [q["offset"] for q in listing[3:]] == [["0"], ["2"], ["4"]]
        rows = stored_rows(config)
        assert TOKEN not in json.dumps(rows, default=str) + json.dumps(first)
        assert {r.tenant_id for r in rows} == {"acme"}  # no access rules here: the source's tenant

        # a day later one incident is resolved; the next run asks only for what changed since the mark
        kafka = next(i for i in incidents if i["id"] == "Q4KAFKA")
        kafka.update(status="resolved", last_status_change_at="2026-04-06T09:00:00Z", updated_at="2026-04-06T09:00:00Z")
        parts["Q4KAFKA"]["log_entries"].append(
            {
                "id": "Q4KAFKAL99",
                "type": "resolve_log_entry",
                "summary": "Resolved by Marcus Chen",
                "created_at": "2026-04-06T09:00:00Z",
                "incident": {"id": "Q4KAFKA"},
            }
        )
        api.requests.clear()
        second = ingest_flow(config_path=str(config))
        # the overlap window re-reads the latest incident (Q5AUTHG, unchanged) besides the changed one
        assert second["documents"] == {
            "seen": 2,
            "indexed": 1,
            "unchanged": 1,
            "deleted": 0,
            "failed": 0,
            "skipped": 0,
            "history_versions": 0,
        }
        assert "/incidents" not in api.paths() and "/log_entries" in api.paths()
        assert {p for p in api.paths() if p.count("/") == 2} == {"/incidents/Q4KAFKA", "/incidents/Q5AUTHG"}
        since = next(q for p, q in api.requests if p == "/log_entries")["since"][0]
        assert since.startswith("2026-04-05T18:20:00")  # the previous mark (18:30) minus the 10-minute overlap
        resolved = [r for r in stored_rows(config) if r.locator == "Q4KAFKA"]
        assert resolved and all(r.temporal_end == 1775466000 for r in resolved)  # 2026-04-06T09:00:00Z


def test_bad_incidents_are_reported_by_id_and_the_rest_indexed(tmp_path, prefect_server, token):
    incidents, parts = sample()
    broken = copy.deepcopy(incidents[0])
    broken.update(id="QBADTIME", created_at=12345)
    no_notes = copy.deepcopy(incidents[1])
    no_notes.update(id="QNONOTES")  # the server has no parts for it: 404 on its sub-resources
    nameless = {"title": "no id at all", "created_at": "2026-01-01T00:00:00Z"}
    parts["QBADTIME"] = parts[incidents[0]["id"]]
    with FakePagerDuty([*incidents, broken, no_notes, nameless], parts) as api:
        config = api_config(tmp_path, api.url)
        report = ingest_flow(config_path=str(config))
    # the mark does not move past the failed incidents: the next window reads them again
    from cairn.index.state import SourceState

    milvus = load_config(config).milvus
    state = SourceState(load_config(config).state_path, milvus.identity)
    # QBADTIME's change time, the earliest failure
    assert state.get("pd", report["documents"]["indexed"])["high_water"] == "2025-11-14T03:41:52Z"
    state.close()
    reasons = {f["document"]: f["error"] for f in report["failures"]}
    assert report["documents"]["indexed"] == 6 and report["documents"]["failed"] == 3
    assert "'created_at' must be an ISO timestamp" in reasons["QBADTIME"]
    assert "404" in reasons["QNONOTES"]
    assert any(k.startswith("/incidents[") and "without a string 'id'" in v for k, v in reasons.items())


def test_a_refused_token_stops_the_source_with_a_message_that_does_not_print_it(tmp_path, prefect_server, monkeypatch):
    monkeypatch.setenv("CAIRN_TEST_PD_TOKEN", "wrong-token-value-123")
    incidents, parts = sample()
    with FakePagerDuty(incidents, parts) as api, pytest.raises(SourcesFailed, match="failed: pd") as failed:
        ingest_flow(config_path=str(api_config(tmp_path, api.url)))
    report = failed.value.report
    (failure,) = report["failures"]
    assert failure["document"] == "*" and "401 Unauthorized" in failure["error"] and "token_env" in failure["error"]
    assert "wrong-token-value-123" not in json.dumps(report)


def test_export_folder_with_a_broken_file_indexes_the_rest(tmp_path, prefect_server):
    folder = tmp_path / "export"
    shutil.copytree(SAMPLE, folder)
    (folder / "Q3PAYER" / "notes.json").write_text('{"notes": [ {"id": ')
    config = write_config(
        tmp_path / "c.toml",
        tmp_path / "index",
        [
            {
                "name": "pd",
                "type": "pagerduty",
                "path": str(folder),
                "tenant": "acme",
                "acl": ["sre"],
                "access": [{"team": "Globex Ops", "tenant": "globex", "acl": ["globex-ops"]}],
            },
        ],
    )
    report = ingest_flow(config_path=str(config))
    assert report["documents"]["indexed"] == 5
    assert [(f["document"], "notes.json" in f["error"]) for f in report["failures"]] == [("Q3PAYER", True)]
    tenants = {r.locator: r.tenant_id for r in stored_rows(config)}
    assert tenants["Q6GLXSC"] == "globex" and tenants["Q1LEDGR"] == "acme"


def test_a_backfill_window_is_passed_to_the_api_and_respected(tmp_path, prefect_server, token):
    incidents, parts = sample()
    with FakePagerDuty(incidents, parts) as api:
        config = api_config(
            tmp_path, api.url, since="2026-01-01T00:00:00Z", until="2026-03-15T00:00:00Z", statuses=["resolved"]
        )
        report = ingest_flow(config_path=str(config))
        listing = [q for p, q in api.requests if p == "/incidents"]
    assert listing[0]["since"] == ["2026-01-01T00:00:00Z"] and listing[0]["until"] == ["2026-03-15T00:00:00Z"]
    assert listing[0]["statuses[]"] == ["resolved"]
    assert sorted(r.locator for r in stored_rows(config) if r.extra.get("section_count")) == [
        "Q2EDGTL",
        "Q3PAYER",
    ]
    assert report["documents"]["indexed"] == 2


def test_an_access_change_rewrites_every_incident_not_only_those_changed_since_the_mark(
    tmp_path, prefect_server, token
):
    """The API is asked only for what changed since the high-water mark; after the source's acl is edited,
    the next run lists everything, so no incident keeps the revoked group (and nothing is re-embedded)."""
    incidents, parts = sample()
    with FakePagerDuty(incidents, parts) as api:
        config = api_config(tmp_path, api.url)
        assert ingest_flow(config_path=str(config))["documents"]["indexed"] == 6
        api_config(tmp_path, api.url, acl=["oncall"])  # sre revoked; no incident changed
        api.requests.clear()
        second = ingest_flow(config_path=str(config))
        assert "/incidents" in api.paths()  # a full listing, not the log entries since the mark
        assert second["documents"]["indexed"] == 6 and second["embeddings_computed"] == 0
        third = ingest_flow(config_path=str(config))  # the mark works again once every row has the new access
        assert third["documents"]["indexed"] == 0 and third["documents"]["seen"] <= 2
    store = MilvusStore(load_config(config).milvus, dim=384)
    store.load()
    try:
        acls = {tuple(r.access_control_list) for r in store.iterate("", ["access_control_list"])}
    finally:
        store.close()
    assert acls == {("oncall",)}


def test_a_cursor_never_narrows_another_index_nor_a_collection_that_lost_documents(tmp_path, prefect_server, token):
    incidents, parts = sample()
    every = {i["id"] for i in incidents}
    with FakePagerDuty(incidents, parts) as api:
        first = api_config(tmp_path, api.url)
        ingest_flow(config_path=str(first))
        # a second index (another URI: a move to a server, a second index) sharing the first one's state file
        (tmp_path / "second").mkdir()
        second = api_config(tmp_path / "second", api.url)
        state_line = next(line for line in first.read_text().splitlines() if line.startswith("state_path"))
        text = second.read_text().splitlines()
        second.write_text("\n".join(state_line if line.startswith("state_path") else line for line in text) + "\n")
        assert load_config(second).state_path == load_config(first).state_path
        report = ingest_flow(config_path=str(second))
        assert report["documents"]["indexed"] == len(every) and {r.locator for r in stored_rows(second)} == every

        # the first collection loses two incidents behind Cairn's back (a restored backup, a hand-made delete)
        store = MilvusStore(load_config(first).milvus, dim=384)
        store.ensure_collection()
        lost = [r.chunk_id for r in store.iterate("", ["chunk_id", "locator"]) if r.locator in {"Q4KAFKA", "Q5AUTHG"}]
        store.delete_chunks(lost)
        store.close()
        again = ingest_flow(config_path=str(first))  # its cursor was saved when it held six: a full listing
        assert again["documents"]["seen"] == len(every) and again["documents"]["indexed"] == 2
        assert {r.locator for r in stored_rows(first)} == every
