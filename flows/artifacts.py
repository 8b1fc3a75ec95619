"""What a flow run publishes to Prefect: the run report (markdown, and a table of per-source counts) and the
data-quality report (markdown, and a link to its HTML).

Artifact keys are unique per deployment (`cairn-run-report-nightly-ingest`), so two deployments on one
Prefect server keep separate histories; a run outside any deployment (`cairn ingest` from a shell) keeps the
plain keys (`cairn-run-report`, `cairn-run-sources`, `cairn-quality-report`, `cairn-quality-link`).
"""

from __future__ import annotations

import re
from pathlib import Path

from prefect.artifacts import create_link_artifact, create_markdown_artifact, create_table_artifact

import cairn.flows  # noqa: F401  (Prefect defaults before Prefect is imported)
from cairn.schemas.run_report import RunReport


def artifact_key(kind: str) -> str:
    """`cairn-<kind>`, suffixed with the deployment's name when the run belongs to one (keys allow lower-case
    letters, digits and dashes only)."""
    from prefect.runtime import deployment

    name = deployment.name or ""
    slug = re.sub(r"[^a-z0-9]+", "-", str(name).lower()).strip("-")
    return f"cairn-{kind}-{slug}" if slug else f"cairn-{kind}"


_MARKUP = re.compile(r"([\\`*_{}\[\]()<>#!|~&])")  # what markdown (CommonMark, GFM tables) reads as markup


def cell(text: object) -> str:
    """Text from a document or an error (a file name, a title, a parser's message) shown as itself in a table
    cell: every character markdown would read as markup escaped, line breaks as spaces. A Prefect UI renders
    these artifacts: a file named `[x](javascript:...)` or `<img ...>` must stay text."""
    return _MARKUP.sub(r"\\\1", " ".join(str(text).split()))


def run_markdown(report: RunReport, title: str = "Cairn ingest") -> str:
    d = report.documents
    lines = [
        f"### {title} {report.run_id}",
        "",
        "| seen | indexed | unchanged | skipped | deleted | failed | sections | chunks | embeddings computed "
        "| seconds |",
        "|---|---|---|---|---|---|---|---|---|---|",
        f"| {d.seen} | {d.indexed} | {d.unchanged} | {d.skipped} | {d.deleted} | {d.failed} | {report.sections} "
        f"| {report.chunks} "
        f"| {report.embeddings_computed} | {report.seconds:.1f} |",
    ]
    if report.failures:
        lines += ["", "| source | document | error |", "|---|---|---|"]
        lines += [f"| {cell(f.source)} | {cell(f.document)} | {cell(f.error)} |" for f in report.failures]
    if report.warnings:
        lines += ["", "| source | document | warning |", "|---|---|---|"]
        lines += [f"| {cell(w.source)} | {cell(w.document)} | {cell(w.error)} |" for w in report.warnings]
    return "\n".join(lines)


def source_rows(report: RunReport) -> list[dict]:
    """One row per source: how it went and its document counts (the table artifact)."""
    columns = ("status", "seen", "indexed", "unchanged", "skipped", "deleted", "failed", "error")
    return [{"source": name, **{c: part.get(c, "") for c in columns}} for name, part in report.per_source.items()]


def publish_run(report: RunReport, title: str) -> None:
    create_markdown_artifact(key=artifact_key("run-report"), markdown=run_markdown(report, title), description=title)
    create_table_artifact(
        key=artifact_key("run-sources"), table=source_rows(report), description=f"{title}: per source"
    )


def publish_quality(result) -> None:
    """The quality report's table as markdown, and a link to its HTML (the uploaded copy when there is one)."""
    from cairn.quality.report_folder import report_markdown

    create_markdown_artifact(
        key=artifact_key("quality-report"), markdown=report_markdown(result), description="Cairn data quality"
    )
    page = (
        f"{result.uploaded_to.rstrip('/')}/index.html"
        if result.uploaded_to
        else Path(result.report_dir, "index.html").resolve().as_uri()
    )
    create_link_artifact(
        key=artifact_key("quality-link"),
        link=page,
        link_text="Cairn data-quality report",
        description="the newest data-quality report",
    )
