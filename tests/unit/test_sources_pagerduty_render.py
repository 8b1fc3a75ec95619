import pytest

from cairn.schemas.config import PagerDutySourceConfig
from cairn.sources.pagerduty import PagerDutySource
from cairn.sources.pagerduty.render import MAX_NOTE_CHARS, render

INCIDENT = {
    "id": "Q1",
    "incident_number": 7,
    "title": "Disk full on db-1",
    "status": "resolved",
    "urgency": "high",
    "service": {"id": "PS1", "summary": "ledger-db"},
    "created_at": "2026-01-01T00:00:00Z",
}


def test_timeline_is_in_time_order_and_every_part_has_its_heading():
    log = [
        {"type": "resolve_log_entry", "summary": "Resolved", "created_at": "2026-01-01T02:00:00Z"},
        {"type": "trigger_log_entry", "summary": "Triggered", "created_at": "2026-01-01T00:00:00Z"},
    ]
    text = render(
        INCIDENT, log, [{"content": "checked", "created_at": "2026-01-01T01:00:00Z"}], [{"summary": "DiskFull"}]
    )
    assert text.index("trigger: Triggered") < text.index("resolve: Resolved")
    assert [line for line in text.splitlines() if line.startswith("#")] == [
        "# ledger-db",
        "## Incident #7: Disk full on db-1",
        "### Summary",
        "### Timeline",
        "### Notes",
        "### Alerts",
    ]


def test_a_huge_note_is_cut_and_says_so_and_sections_stay_bounded():
    text = render(INCIDENT, [], [{"content": "log line. " * 200_000, "created_at": "2026-01-01T01:00:00Z"}], [])
    assert len(text) < MAX_NOTE_CHARS + 2_000 and "note truncated: 2,000,000 characters" in text


def test_severity_and_access_follow_the_configured_mappings(tmp_path):
    source = PagerDutySource(
        PagerDutySourceConfig(
            name="pd",
            type="pagerduty",
            path=str(tmp_path),
            tenant="acme",
            acl=["sre"],
            severity_map={"P2": "sev3"},
            access=[{"team": "Globex Ops", "tenant": "globex", "acl": ["globex-ops"]}],
        )
    )
    assert source._severity({"priority": {"summary": "P2"}, "urgency": "high"}).value == "sev3"  # configured
    assert source._severity({"urgency": "low"}).value == "sev4"  # the default mapping
    assert source._access("x", "PS1", [{"summary": "Globex Ops"}]) == ("globex", ["globex-ops"])
    assert source._access("x", "PS1", [{"summary": "Other"}]) == ("acme", ["sre"])


def _export(tmp_path, incidents: list, parts: dict | None = None):
    import json

    (tmp_path / "incidents.json").write_text(json.dumps({"incidents": incidents}))
    for incident_id, files in (parts or {}).items():
        (tmp_path / incident_id).mkdir()
        for part, body in files.items():
            (tmp_path / incident_id / f"{part}.json").write_bytes(body)
    return PagerDutySource(
        PagerDutySourceConfig(
            name="pd", type="pagerduty", path=str(tmp_path), tenant="acme", acl=["sre"], max_incident_bytes=100_000
        )
    )


def _outcomes(source) -> dict:
    from cairn.sources import DiscoveryFailure, DocumentError

    out = {}
    for ref in source.discover():
        if isinstance(ref, DiscoveryFailure):
            out[ref.locator] = ref.reason
            continue
        try:
            out[ref.locator] = source.load(ref)
        except DocumentError as exc:
            out[ref.locator] = exc.reason
    return out


def test_fields_of_the_wrong_type_are_refused_naming_the_field(tmp_path):
    bad = {"teams": 5, "assignments": "me", "custom_fields": {"a": 1}, "body": "details"}
    incidents = [dict(INCIDENT, id="OK")] + [
        dict(INCIDENT, id=f"Q{field}", **{field: value}) for field, value in bad.items()
    ]
    outcomes = _outcomes(_export(tmp_path, incidents))
    assert outcomes["OK"].title == "[#7] Disk full on db-1"
    assert outcomes["Qteams"] == "'teams' must be a list, got int"
    assert outcomes["Qassignments"] == "'assignments' must be a list, got str"
    assert outcomes["Qcustom_fields"] == "'custom_fields' must be a list, got dict"
    assert outcomes["Qbody"] == "'body' must be an object, got str"


def test_an_oversized_export_incident_is_refused_at_discovery_by_its_file_sizes(tmp_path):
    huge = dict(INCIDENT, id="QHUGE")
    source = _export(tmp_path, [INCIDENT, huge], {"QHUGE": {"notes": b""}})
    with open(tmp_path / "QHUGE" / "notes.json", "r+b") as handle:
        handle.truncate(20 * 1024 * 1024)  # 20 MB, sparse: neither valid JSON nor ever read
    outcomes = _outcomes(source)
    assert outcomes["QHUGE"] == (
        "incident files are 20,971,520 bytes (QHUGE/notes.json: 20,971,520), over the "
        "source's max_incident_bytes (100,000); not read"
    )
    assert outcomes["Q1"].title == "[#7] Disk full on db-1"


def test_an_api_incident_is_refused_while_paging_once_a_part_passes_the_limit(monkeypatch):
    from cairn.sources import DocumentError
    from tests.pagerduty_server import TOKEN, FakePagerDuty

    monkeypatch.setenv("CAIRN_TEST_PD_TOKEN", TOKEN)
    entries = [
        {"id": f"L{i}", "type": "annotate_log_entry", "summary": "x" * 1000, "created_at": "2026-01-01T00:00:00Z"}
        for i in range(400)
    ]  # ~430 kB of log entries, in 200 pages of 2
    with FakePagerDuty([INCIDENT], {"Q1": {"log_entries": entries, "notes": [], "alerts": []}}) as api:
        source = PagerDutySource(
            PagerDutySourceConfig(
                name="pd",
                type="pagerduty",
                api_url=api.url,
                token_env="CAIRN_TEST_PD_TOKEN",
                tenant="acme",
                acl=["sre"],
                page_size=2,
                max_incident_bytes=100_000,
            )
        )
        (ref,) = list(source.discover())
        with pytest.raises(DocumentError, match=r"log_entries are over the source's max_incident_bytes \(100,000\)"):
            source.load(ref)
        pages = [p for p in api.paths() if p.endswith("/log_entries")]
    assert 45 <= len(pages) <= 55  # stopped at ~100 kB, not after all 200 pages
