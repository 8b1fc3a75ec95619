from chunkers import chunk_document
from schemas.config import ChunkingConfig, SourceConfig
from sources.pagerduty import PagerDutySource
from sources.pagerduty.render import MAX_NOTE_CHARS, render

INCIDENT = {"id": "Q1", "incident_number": 7, "title": "Disk full on db-1", "status": "resolved", "urgency": "high",
            "service": {"id": "PS1", "summary": "ledger-db"}, "created_at": "2026-01-01T00:00:00Z"}


def test_timeline_is_in_time_order_and_every_part_has_its_heading():
    log = [{"type": "resolve_log_entry", "summary": "Resolved", "created_at": "2026-01-01T02:00:00Z"},
           {"type": "trigger_log_entry", "summary": "Triggered", "created_at": "2026-01-01T00:00:00Z"}]
    text = render(INCIDENT, log, [{"content": "checked", "created_at": "2026-01-01T01:00:00Z"}], [{"summary": "DiskFull"}])
    assert text.index("trigger: Triggered") < text.index("resolve: Resolved")
    assert [line for line in text.splitlines() if line.startswith("#")] == [
        "# ledger-db", "## Incident #7: Disk full on db-1", "### Summary", "### Timeline", "### Notes", "### Alerts"]


def test_a_huge_note_is_cut_and_says_so_and_sections_stay_bounded():
    text = render(INCIDENT, [], [{"content": "log line. " * 200_000, "created_at": "2026-01-01T01:00:00Z"}], [])
    assert len(text) < MAX_NOTE_CHARS + 2_000 and "note truncated: 2,000,000 characters" in text


def test_severity_and_access_follow_the_configured_mappings(tmp_path):
    source = PagerDutySource(SourceConfig(
        name="pd", type="pagerduty", path=str(tmp_path), tenant="acme", acl=["sre"],
        severity_map={"P2": "sev3"}, access=[{"team": "Globex Ops", "tenant": "globex", "acl": ["globex-ops"]}],
    ))
    assert source._severity({"priority": {"summary": "P2"}, "urgency": "high"}).value == "sev3"  # configured
    assert source._severity({"urgency": "low"}).value == "sev4"  # the default mapping
    assert source._access("x", "PS1", [{"summary": "Globex Ops"}]) == ("globex", ["globex-ops"])
    assert source._access("x", "PS1", [{"summary": "Other"}]) == ("acme", ["sre"])
