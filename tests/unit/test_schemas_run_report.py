"""schemas/run_report.py: the run report as records (per source, index, quality), and its JSON, the `--json` shape
of `cairn ingest` and a flow run's result, key for key in its order; read back exactly (a flow run's result)."""

from __future__ import annotations

import json

from cairn.schemas.run_report import (
    SOURCE_FAILURE,
    DocumentCounts,
    IndexReport,
    QualitySummary,
    RunReport,
    SourceOutcome,
    SourceReport,
)

TOP = [
    "run_id",
    "documents",
    "sections",
    "chunks",
    "tokens",
    "embeddings_computed",
    "model_seconds",
    "rows_written",
    "seconds",
    "failures",
    "warnings",
    "skipped",
    "sources",
    "quality",
    "per_source",
    "index",
    "reindexed",
    "unconfigured_sources",
    "recipe_changes",
    "failed_sources",
    "chunks_per_second",
]
COUNTS = ["seen", "indexed", "unchanged", "deleted", "failed", "skipped", "history_versions"]
PER_SOURCE = ["status", *COUNTS, "embeddings_computed", "model_seconds", "seconds"]


def two_sources() -> RunReport:
    """A run of two sources: `wiki` indexed two documents and failed one, `pd` failed as a whole."""
    report = RunReport(run_id="r1")
    wiki = SourceReport(sections=3, chunks=9, tokens=1200, embeddings_computed=12, model_seconds=0.51234)
    wiki.documents = DocumentCounts(seen=3, indexed=2)
    wiki.written_documents = {"wiki": ["a", "b"]}
    wiki.fail("wiki", "broken.md", "binary file")
    wiki.skip("wiki", "empty.md", "nothing to index")
    wiki.warn("wiki", "scan.pdf", "2 pages without text")
    report.close_source("wiki", wiki, 1.23456)
    pd = SourceReport()
    pd.fail("pd", SOURCE_FAILURE, "unreachable")
    report.close_source("pd", pd, 0.1)
    report.seconds, report.rows_written = 2.34567, 40
    return report


def test_the_json_holds_every_key_of_the_run_report_in_its_order():
    data = two_sources().to_dict()
    assert list(data) == TOP
    assert list(data["documents"]) == COUNTS
    assert list(data["per_source"]["wiki"]) == PER_SOURCE
    assert list(data["per_source"]["pd"]) == [*PER_SOURCE, "error"]
    assert list(data["failures"][0]) == ["source", "document", "error", "policy"]
    assert list(data["skipped"][0]) == ["source", "document", "reason", "read"]
    assert data["index"] == {} and data["quality"] is None  # a store without generations; no quality check
    assert data["seconds"] == 2.346 and data["per_source"]["wiki"]["seconds"] == 1.235
    assert data["per_source"]["wiki"]["model_seconds"] == 0.512 and data["chunks_per_second"] == round(9 / 2.346, 2)
    assert data["failed_sources"] == ["pd"] and data["per_source"]["pd"]["error"] == "unreachable"
    assert "written_documents" not in data


def test_a_source_outcome_is_a_record_the_run_reads():
    report = two_sources()
    wiki, pd = report.per_source["wiki"], report.per_source["pd"]
    assert (wiki.status, wiki.failed, wiki.error, wiki.documents.failed) == ("partial", False, None, 1)
    assert (pd.status, pd.failed, pd.error) == ("failed", True, "unreachable")


def test_the_index_part_says_the_switch_only_during_a_rebuild():
    assert IndexReport("cairn__g1", "cairn__g1").to_dict() == {"collection": "cairn__g1", "serving": "cairn__g1"}
    pending = IndexReport("cairn__g2", "cairn__g1", "another encoder", "pending", waiting_for=["pd"])
    assert pending.pending and pending.to_dict() == {
        "collection": "cairn__g2",
        "serving": "cairn__g1",
        "rebuild": "another encoder",
        "switch": "pending",
        "waiting_for": ["pd"],
    }
    done = IndexReport("cairn__g2", "cairn__g2", "another encoder", "done", dropped=None)
    assert list(done.to_dict()) == ["collection", "serving", "rebuild", "switch", "dropped"]
    assert done.to_dict()["dropped"] is None


def test_the_json_read_back_is_the_same_report_to_the_byte():
    report = two_sources()
    report.quality = QualitySummary(False, "/tmp/reports/run-r1", ["wiki: full_text token_count"], 0.25)
    for index in (None, IndexReport("c", "c"), IndexReport("c2", "c", "schema", "pending", waiting_for=["pd"])):
        report.index = index
        text = json.dumps(report.to_dict(), indent=2)
        again = RunReport.from_dict(json.loads(text))
        assert json.dumps(again.to_dict(), indent=2) == text
        assert again.per_source["pd"] == SourceOutcome("failed", DocumentCounts(), seconds=0.1, error="unreachable")
        assert again.index == index and again.quality == report.quality and again.failures == report.failures


def test_a_source_that_fails_as_a_whole_is_a_failed_source_not_a_failed_document():
    report = two_sources()
    assert report.per_source["pd"].documents == DocumentCounts()  # nothing seen, no document failed
    assert report.documents.failed == 1 and [f.document for f in report.failures] == ["broken.md", SOURCE_FAILURE]
    assert report.failed_sources == ["pd"] and report.per_source["pd"].status == "failed"


def test_history_versions_are_counted_apart_from_the_documents_seen():
    """A keep_history source's first run loads past versions beside its documents: they are not `seen` (the
    source listed each document once), so an unchanged source is seen the same on every run."""
    first, again = SourceReport(), SourceReport()
    first.documents = DocumentCounts(seen=5, indexed=6, history_versions=1)
    again.documents = DocumentCounts(seen=5, unchanged=5)
    reports = [RunReport(run_id=run) for run in ("r1", "r2")]
    for report, part in zip(reports, (first, again)):
        report.close_source("git", part)
        d = report.documents
        assert d.seen + d.history_versions == d.indexed + d.unchanged + d.skipped + d.failed
    assert reports[0].documents.seen == reports[1].documents.seen == 5
    assert RunReport.from_dict(reports[0].to_dict()).per_source["git"].documents.history_versions == 1
