"""The run and quality reports as Prefect artifacts: what documents and errors say stays text, each table fits a
panel of Prefect's UI, and the quality report is read inline (the UI opens no file:// link)."""

import re

from markdown_it import MarkdownIt

from cairn.flows.artifacts import CELL_CHARACTERS, FAILED_SHOWN, LISTED, quality_markdown, run_markdown, source_rows
from cairn.schemas.run_report import SOURCE_FAILURE, RunReport, SourceReport

HOSTILE = "[click](javascript:alert(1))<img src=x onerror=alert(1)>|pipe\n## heading `code` *em* &lt;b&gt; \\"


def test_names_and_errors_from_documents_are_shown_as_text_one_item_each():
    part = SourceReport()
    part.fail("wiki", HOSTILE + ".md", "cannot parse " + HOSTILE)
    part.warn("wiki", "ok.md", HOSTILE)
    report = RunReport(run_id="r1")
    report.close_source("wiki", part)
    html = MarkdownIt("commonmark").enable("table").render(run_markdown(report))
    assert "<a " not in html and "<img" not in html and "<h2" not in html and "<code" not in html and "<em" not in html
    items = re.findall(r"<li>(.*?)</li>", html, re.S)
    assert len(items) == 2 and all(item.startswith("wiki · ") for item in items)  # nothing split or nested
    shown = " ".join(HOSTILE.split()).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert shown in html  # every character still there, as text


def _tables(html: str) -> list[list[list[str]]]:
    """Each table of rendered markdown as its rows of cells."""
    return [
        [re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S) for row in table.split("<tr>")[1:]]
        for table in html.split("<table>")[1:]
    ]


def test_the_run_report_fits_a_panel_few_columns_errors_listed_and_cut():
    part = SourceReport()
    for n in range(LISTED + 3):
        part.fail("wiki", f"huge-{n}.md", "cannot parse: " + "a very long parser message " * 40)
    report = RunReport(run_id="r1")
    report.close_source("wiki", part)
    html = MarkdownIt("commonmark").enable("table").render(run_markdown(report))
    tables = _tables(html)
    assert len(tables) == 2 and all(len(cells) <= 5 for table in tables for cells in table)
    items = re.findall(r"<li>(.*?)</li>", html, re.S)  # a list wraps in the panel; a table cell did not
    assert len(items) == LISTED + 1 and items[-1] == "and 3 more in the run report"
    error = items[0].split(": ", 1)[1]
    assert len(error) <= CELL_CHARACTERS and error.endswith("…")


def test_a_failed_source_is_listed_with_its_error_and_the_per_source_table_holds_counts_only():
    part = SourceReport()
    part.fail("gone", SOURCE_FAILURE, "source folder /srv/wiki does not exist")
    report = RunReport(run_id="r1")
    report.close_source("gone", part)
    html = MarkdownIt("commonmark").enable("table").render(run_markdown(report))
    assert "<li>gone · (the whole source): source folder /srv/wiki does not exist</li>" in html
    assert source_rows(report) == [
        {
            "source": "gone",
            "status": "failed",
            "seen": 0,
            "indexed": 0,
            "unchanged": 0,
            "skipped": 0,
            "deleted": 0,
            "failed": 0,  # a failed source, not a failed document (#50); its status and error say it
        }
    ]


def test_the_quality_summary_is_inline_fits_a_panel_and_says_where_the_page_is_as_a_path(tmp_path):
    from cairn.quality.checks import Result
    from cairn.quality.report_folder import QualityReport

    failed = [Result(f"wiki.runbook{n}", "expect", "full_text token_count", False, 12.5, 8) for n in range(12)]
    report = QualityReport(
        success=False,
        report_dir=str(tmp_path / "20261127T105906Z-report-all"),
        rows=470,
        results=[Result("wiki", "expect", "tenant_id", True, 0.0, 470), *failed],
        per_source={
            "wiki": {"rows": 470, "checks": 13, "failed": ["x"] * 12, "sections": 53, "health_fit": 0.981},
        },
        written_at="2026-11-27 10:59:06 UTC",
        index="collection cairn at data/index/cairn.db",
        scope={"kind": "full", "description": "full report: every current row of every source"},
        uploaded_to="s3://reports/cairn/20261127T105906Z-report-all",
    )
    text = quality_markdown(report)
    html = MarkdownIt("commonmark").enable("table").render(text)
    tables = _tables(html)
    assert all(len(cells) <= 4 for table in tables for cells in table)
    assert tables[0][1] == ["wiki", "470", "1 of 13", "98% of 53"]
    assert len(tables[1]) == 1 + FAILED_SHOWN and "and 2 more on the report page." in html
    assert "FAILED, 12 of 13 expectations failed" in html and "2026-11-27 10:59:06 UTC" in html
    assert "<a " not in html and "file:" not in text  # nothing the UI would offer to open and cannot
    page = str(tmp_path / "20261127T105906Z-report-all" / "index.html")
    assert page in html and "s3://reports/cairn/20261127T105906Z-report-all/index.html" in html
