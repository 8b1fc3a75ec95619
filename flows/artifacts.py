"""What a flow run publishes to Prefect: the run report (markdown, and a table of per-source counts) and the
data-quality report's summary (markdown, with where its HTML page is).

Each is read in a panel of Prefect's UI: tables of a few columns, cells cut short (the whole text is in the run
report and the report folder). The UI opens no file:// link, so the quality summary is inline and the page's
place is said as a path (and the uploaded copy's URI).

Artifact keys are unique per deployment (`cairn-run-report-nightly-ingest`), so two deployments on one
Prefect server keep separate histories; a run outside any deployment (`cairn ingest` from a shell) keeps the
plain keys (`cairn-run-report`, `cairn-run-sources`, `cairn-quality-report`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import cairn.flows  # noqa: F401  (Prefect defaults before Prefect is imported)
from cairn.printable import printable
from cairn.schemas.run_report import SOURCE_FAILURE, RunReport

if TYPE_CHECKING:
    from cairn.quality.report_folder import QualityReport

CELL_CHARACTERS = 160  # a text longer than this is cut (an error's whole text is in the run report)
FAILED_SHOWN = 10  # failed expectations listed in the quality summary; the page has them all
LISTED = 50  # failed documents (and warnings) listed in the run report's artifact; the run report has them all


def artifact_key(kind: str) -> str:
    """`cairn-<kind>`, suffixed with the deployment's name when the run belongs to one (keys allow lower-case
    letters, digits and dashes only)."""
    from prefect.runtime import deployment

    name = deployment.name or ""
    slug = re.sub(r"[^a-z0-9]+", "-", str(name).lower()).strip("-")
    return f"cairn-{kind}-{slug}" if slug else f"cairn-{kind}"


_MARKUP = re.compile(r"([\\`*_{}\[\]()<>#!|~&])")  # what markdown (CommonMark, GFM tables) reads as markup


def cell(text: object, limit: int = CELL_CHARACTERS) -> str:
    """Text from a document or an error (a file name, a title, a parser's message) shown as itself in a table
    cell: every character markdown would read as markup escaped, line breaks as spaces, cut at `limit`
    characters. A Prefect UI renders these artifacts: a file named `[x](javascript:...)` or `<img ...>` must stay
    text."""
    return _MARKUP.sub(r"\\\1", short(text, limit))


def short(text: object, limit: int = CELL_CHARACTERS) -> str:
    """`text` on one line, control characters escaped, cut at `limit` characters (an ellipsis saying so)."""
    flat = printable(" ".join(str(text).split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def run_markdown(report: RunReport, title: str = "Cairn ingest") -> str:
    """The run report for Prefect's UI: two short tables of counts, then the failed documents and the warnings as
    lists (a table cell does not wrap there: an error's text ran out of the panel), the first LISTED of each."""
    d = report.documents
    lines = [
        f"### {title} {report.run_id}",
        "",
        "| documents seen | indexed | unchanged | skipped | failed |",
        "|---|---|---|---|---|",
        f"| {d.seen} | {d.indexed} | {d.unchanged} | {d.skipped} | {d.failed} |",
        "",
        "| documents deleted | sections | chunks | embeddings computed | seconds |",
        "|---|---|---|---|---|",
        f"| {d.deleted} | {report.sections} | {report.chunks} | {report.embeddings_computed} | {report.seconds:.1f} |",
    ]
    for heading, items in (("Failed", report.failures), ("Warnings", report.warnings)):
        if items:
            lines += ["", f"**{heading}** ({len(items)}):", ""]
            lines += [f"- {cell(i.source)} · {_document(i.document)}: {cell(i.error)}" for i in items[:LISTED]]
            if len(items) > LISTED:
                lines.append(f"- and {len(items) - LISTED} more in the run report")
    return "\n".join(lines)


def _document(document: str) -> str:
    return "(the whole source)" if document == SOURCE_FAILURE else cell(document)


def source_rows(report: RunReport) -> list[dict]:
    """One row per source: how it went and its document counts (the table artifact). A source's error is in the
    run report's list, not here: Prefect's table does not wrap a cell, and one error pushed it past its panel."""
    counts = ("seen", "indexed", "unchanged", "skipped", "deleted", "failed")
    return [
        {"source": name, "status": part.status, **{c: getattr(part.documents, c) for c in counts}}
        for name, part in report.per_source.items()
    ]


def publish_run(report: RunReport, title: str) -> None:
    from prefect.artifacts import create_markdown_artifact, create_table_artifact  # only a flow run publishes

    create_markdown_artifact(key=artifact_key("run-report"), markdown=run_markdown(report, title), description=title)
    create_table_artifact(
        key=artifact_key("run-sources"), table=source_rows(report), description=f"{title}: per source"
    )


def quality_markdown(report: QualityReport) -> str:
    """The quality report's summary for Prefect's UI: the verdict, when, which index and scope, a short table per
    source, the failed expectations (the first FAILED_SHOWN), and where the HTML page is, as a path."""
    failed = report.failed()
    verdict = "passed" if report.success else "FAILED"
    lines = [
        f"### Cairn data quality: {verdict}, {len(failed)} of {len(report.results)} expectations failed",
        "",
        cell(" · ".join(filter(None, [report.written_at, report.index, report.scope.get("description", "")])), 400)
        + f" ({report.rows} rows)",
    ]
    if report.per_source:
        lines += ["", "| source | rows | checks passed | healthy sections |", "|---|---|---|---|"]
    for name, v in sorted(report.per_source.items()):
        fit = v.get("health_fit")
        healthy = f"{fit * 100:.0f}% of {v.get('sections', 0)}" if fit is not None else "none judged"
        lines.append(f"| {cell(name)} | {v['rows']} | {v['checks'] - len(v['failed'])} of {v['checks']} | {healthy} |")
    if failed:
        lines += ["", "| failed expectation | unexpected |", "|---|---|"]
        lines += [f"| {cell(f'{r.suite}: {r.column}')} | {r.unexpected_percent:.1f}% |" for r in failed[:FAILED_SHOWN]]
        if len(failed) > FAILED_SHOWN:
            lines += ["", f"and {len(failed) - FAILED_SHOWN} more on the report page."]
    page = Path(report.report_dir, "index.html").resolve()
    lines += [
        "",
        "Healthy sections: the share of sections whose chunk health is at least the threshold the health check "
        "asks (see the report page's legend).",
        "",
        f"Report page (HTML, self-contained): {cell(page, 400)} on the machine that ran the check"
        + (f"; uploaded to {cell(report.uploaded_to, 400)}/index.html" if report.uploaded_to else "")
        + ".",
    ]
    return "\n".join(lines)


def publish_quality(result: QualityReport) -> None:
    """The quality report's summary as a markdown artifact (Prefect's UI cannot open the page itself)."""
    from prefect.artifacts import create_markdown_artifact

    create_markdown_artifact(
        key=artifact_key("quality-report"), markdown=quality_markdown(result), description="Cairn data quality"
    )
