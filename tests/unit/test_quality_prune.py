"""Report folders over time: pruning, `latest` (the newest full report), and the trend (full reports only)."""

import json

from cairn.quality.history import point_latest, trend
from cairn.quality.report_folder import prune


def test_only_the_newest_report_folders_are_kept(tmp_path):
    for stamp in ("20260101T000000Z-a", "20260102T000000Z-b", "20260103T000000Z-c"):
        (tmp_path / stamp).mkdir()
        (tmp_path / stamp / "summary.json").write_text("{}")
    (tmp_path / "not-a-report").mkdir()  # never touched
    prune(tmp_path, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["20260102T000000Z-b", "20260103T000000Z-c", "not-a-report"]
    prune(tmp_path, 0)
    assert len(list(tmp_path.iterdir())) == 3


def write_summary(root, name: str, kind: str | None, success: bool = True):
    """A report folder as write_report leaves it (summary.json; a scope unless it predates scopes)."""
    (root / name).mkdir()
    summary = {"success": success, "rows": 3, "results": [{"success": success}]}
    if kind is not None:
        summary["scope"] = {"kind": kind, "description": kind}
    (root / name / "summary.json").write_text(json.dumps(summary))
    return root / name


def test_the_latest_link_is_never_counted_or_pruned_and_follows_the_newest(tmp_path):
    for stamp in ("20260101T000000Z-report-all", "20260102T000000Z-report-all", "20260103T000000Z-report-all"):
        point_latest(write_summary(tmp_path, stamp, None, success=False), full=True)
    assert (tmp_path / "latest").resolve() == (tmp_path / "20260103T000000Z-report-all").resolve()
    prune(tmp_path, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "20260102T000000Z-report-all",
        "20260103T000000Z-report-all",
        "latest",
    ]
    points = trend(tmp_path, "20260104T000000Z-report-all", {"success": True, "rows": 5, "results": []}, limit=2)
    assert [(p["report"], p["failed"]) for p in points] == [
        ("20260103T000000Z-report-all", 1),
        ("20260104T000000Z-report-all", 0),
    ]


def test_the_trend_holds_full_reports_only(tmp_path):
    write_summary(tmp_path, "20260101T000000Z-report-all", None)  # before scopes were recorded: full by its name
    write_summary(tmp_path, "20260102T000000Z-run-1a2b3c4d", None)  # an ingest's check, then
    write_summary(tmp_path, "20260103T000000Z-report-all", "full")
    write_summary(tmp_path, "20260104T000000Z-report-wiki", "source")
    write_summary(tmp_path, "20260105T000000Z-run-5e6f7a8b", "ingest")
    full = {"success": True, "rows": 9, "results": [], "scope": {"kind": "full"}}
    points = trend(tmp_path, "20260106T000000Z-report-all", full, limit=10)
    assert [p["report"] for p in points] == [
        "20260101T000000Z-report-all",
        "20260103T000000Z-report-all",
        "20260106T000000Z-report-all",
    ]
    assert all(p["full"] for p in points)
    one_source = {"success": True, "rows": 2, "results": [], "scope": {"kind": "source"}}
    partial = trend(tmp_path, "20260106T000000Z-report-wiki", one_source, limit=2)
    assert [p["report"] for p in partial] == ["20260101T000000Z-report-all", "20260103T000000Z-report-all"]


def test_latest_leads_to_the_newest_full_report_not_a_later_partial_one(tmp_path):
    full = write_summary(tmp_path, "20260101T000000Z-report-all", "full")
    assert point_latest(full, full=True)
    backfill = write_summary(tmp_path, "20260102T000000Z-run-1a2b3c4d", "ingest")
    assert not point_latest(backfill, full=False)
    one_source = write_summary(tmp_path, "20260103T000000Z-report-wiki", "source")
    assert not point_latest(one_source, full=False)
    assert (tmp_path / "latest").resolve() == full.resolve()
    newer = write_summary(tmp_path, "20260104T000000Z-report-all", "full")
    assert point_latest(newer, full=True) and (tmp_path / "latest").resolve() == newer.resolve()


def test_latest_leads_to_the_newest_report_until_there_is_a_full_one(tmp_path):
    first = write_summary(tmp_path, "20260101T000000Z-run-1a2b3c4d", "ingest")
    assert point_latest(first, full=False)  # an index only ever checked after ingests still has a latest
    second = write_summary(tmp_path, "20260102T000000Z-run-5e6f7a8b", "ingest")
    assert point_latest(second, full=False) and (tmp_path / "latest").resolve() == second.resolve()


def test_pruning_keeps_the_full_report_latest_leads_to_however_many_partial_ones_followed(tmp_path):
    full = write_summary(tmp_path, "20260101T000000Z-report-all", "full")
    point_latest(full, full=True)
    for day in range(2, 6):
        point_latest(write_summary(tmp_path, f"2026010{day}T000000Z-run-{day}", "ingest"), full=False)
    prune(tmp_path, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "20260101T000000Z-report-all",
        "20260104T000000Z-run-4",
        "20260105T000000Z-run-5",
        "latest",
    ]
    assert (tmp_path / "latest" / "summary.json").exists()


def test_a_selection_of_every_current_row_is_a_full_report_and_any_narrower_one_is_not():
    from cairn.quality import scope

    assert scope.rows("is_current == true").full and scope.rows("is_current  ==  true ").full
    assert not scope.rows('is_current == true and source_name == "wiki"').full
    assert scope.of(None, None).full and not scope.of("wiki", None).full and not scope.of(None, "acme").full
    assert scope.of("wiki", "acme").description == "one source wiki and tenant acme only"


def test_two_reports_in_one_second_get_folders_of_their_own(tmp_path):
    from cairn.quality.report_folder import new_folder

    first, second = (
        new_folder(tmp_path, "20260101T000000Z-report-all"),
        new_folder(tmp_path, "20260101T000000Z-report-all"),
    )
    assert first != second and first.is_dir() and second.is_dir() and sorted([second, first]) == [first, second]
