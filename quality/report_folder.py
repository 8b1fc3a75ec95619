"""A data-quality report folder: summary.json, plots, a readable index.html, GE's Data Docs, optional S3.

report_dir/
  index.html          the page to open: verdict, failing expectations with examples, plots
  summary.json        {"success", "report_dir", "results": [{"expectation", "column", "success",
                       "unexpected_percent", "suite", "examples", ...}], "health": {...}}
  token_counts.svg    token counts per chunk type and source, the SLA band shaded
  health.svg          chunk_health_score distribution of parent sections
<report_root>/latest  a link to the newest report folder
  gx/uncommitted/data_docs/local_site/index.html   great-expectations Data Docs
"""

from __future__ import annotations

import html
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from cairn.quality.checks import Result, bands, validate
from cairn.quality.history import point_latest, trend
from cairn.quality.plots import Panel, figure
from cairn.redact import redact
from cairn.schemas.config import CairnConfig

TREND_REPORTS = 10  # the reports the trend shows (fewer when keep_reports keeps fewer)


@dataclass
class QualityReport:
    success: bool
    report_dir: str
    rows: int
    results: list[Result] = field(default_factory=list)
    health: dict = field(default_factory=dict)
    uploaded_to: str | None = None
    per_source: dict[str, dict] = field(default_factory=dict)  # source -> rows, documents, checks, failed, health
    trend: list[dict] = field(default_factory=list)  # the last reports, oldest first, this one last

    def failed(self) -> list[Result]:
        return [r for r in self.results if not r.success]

    def failed_sources(self) -> set[str]:
        return {r.suite.split(".", 1)[0] for r in self.failed()}

    def to_dict(self) -> dict:
        return {
            "success": self.success,
            "report_dir": self.report_dir,
            "rows": self.rows,
            "results": [r.to_dict() for r in self.results],
            "health": self.health,
            "uploaded_to": self.uploaded_to,
            "per_source": self.per_source,
            "trend": self.trend,
        }


def health_summary(frame: pd.DataFrame, worst: int = 10) -> dict:
    parents = frame[frame["chunk_type"] == "full_text"].dropna(subset=["chunk_health_score"])
    if parents.empty:
        return {"sections": 0}
    scores = parents["chunk_health_score"].astype(float)
    lowest = parents.sort_values("chunk_health_score").head(worst)
    return {
        "sections": int(len(parents)),
        "mean": round(float(scores.mean()), 4),
        "quantiles": {f"p{int(q * 100)}": round(float(scores.quantile(q)), 4) for q in (0.05, 0.25, 0.5, 0.75)},
        "worst": [
            {
                "score": round(float(r.chunk_health_score), 4),
                "document_id": r.document_id,
                "locator": r.locator,
                "section_id": r.section_id,
                "token_count": int(r.token_count),
                "merge_count": r.merge_count,
                "split_count": r.split_count,
            }
            for r in lowest.itertuples()
        ],
    }


def source_summary(frame: pd.DataFrame, results: list[Result]) -> dict[str, dict]:
    """Per source: its rows and documents, how many checks passed, which failed, its sections' mean health."""
    out = {}
    for source, rows in frame.groupby("source_name", dropna=False):
        mine = [r for r in results if r.suite.split(".", 1)[0] == str(source)]
        parents = rows[rows["chunk_type"] == "full_text"]["chunk_health_score"].dropna().astype(float)
        out[str(source)] = {
            "rows": int(len(rows)),
            "documents": int(rows["document_id"].nunique()),
            "checks": len(mine),
            "failed": sorted(f"{r.suite}: {r.column}" for r in mine if not r.success),
            "health_mean": round(float(parents.mean()), 4) if len(parents) else None,
        }
    return out


def checked_rows(rows: pd.DataFrame, chunk_type: str, parent_min: float) -> pd.DataFrame:
    """The rows the size expectation of `chunk_type` checks (the row conditions of
    quality.checks.size_expectations): a parent that is a whole document under the floor, and a child that
    holds a stretch's remainder or a definition, are exempt."""
    if chunk_type == "full_text":
        return rows[~(rows["whole_document"].astype(bool) & (rows["token_count"] < parent_min))]
    return rows[~rows["is_remainder"].astype(bool)]


def plot(frame: pd.DataFrame, config: CairnConfig, folder: Path) -> list[str]:
    written = []
    panels = []
    # one panel per suite of the table (source and content type) and chunk type, over the rows it checks
    checked_parents = []
    for (source, content_type), typed in frame.groupby(["source_name", "content_type"], dropna=False):
        b = bands(config, str(source), str(content_type))
        checked_parents.append(
            checked_rows(typed[typed["chunk_type"] == "full_text"], "full_text", b["parent_min_tokens"])
        )
        for chunk_type in ("full_text", "child"):
            lo, hi = (
                (b["parent_min_tokens"], b["parent_max_tokens"])
                if chunk_type == "full_text"
                else (b["child_min_tokens"], b["child_max_tokens"])
            )
            every = typed[typed["chunk_type"] == chunk_type]
            rows = checked_rows(every, chunk_type, b["parent_min_tokens"])
            if rows.empty:
                continue
            inside = ((rows["token_count"] >= lo) & (rows["token_count"] <= hi)).mean() * 100
            exempt = f", {len(every) - len(rows)} exempt" if len(every) > len(rows) else ""
            panels.append(
                Panel(
                    values=rows["token_count"].tolist(),
                    xlabel="tokens",
                    color="#1565c0",
                    bins=40,
                    band=(lo, hi),
                    title=f"{source}.{content_type} · {chunk_type}: {len(rows)} rows checked{exempt}, "
                    f"{inside:.1f}% inside the band",
                    band_label=f"SLA {int(lo)}-{int(hi)} shaded",
                )
            )
    if panels:
        (folder / "token_counts.svg").write_text(figure(panels), encoding="utf-8")
        written.append("token_counts.svg")
    # the health expectation checks the parents the size expectation checks (whole short documents exempt)
    parents = pd.concat(checked_parents).dropna(subset=["chunk_health_score"]) if checked_parents else frame.iloc[:0]
    if not parents.empty:
        scores = parents["chunk_health_score"].astype(float)
        (folder / "health.svg").write_text(
            figure(
                [
                    Panel(
                        values=scores.tolist(),
                        title=f"chunk_health_score of the {len(parents)} sections checked (mean {scores.mean():.3f})",
                        xlabel="score",
                        color="#6a1b9a",
                        bins=20,
                        value_range=(0.0, 1.0),
                        line=config.quality.health_min,
                        line_label=f"health_min {config.quality.health_min} dashed",
                    )
                ]
            ),
            encoding="utf-8",
        )
        written.append("health.svg")
    return written


def render_html(report: QualityReport, title: str, plots: list[str], written: str = "") -> str:
    """The page to open (`written`: when, and for which index, said under the title): the verdict, each source,
    the plots, then every expectation (failing first) and the trend."""
    verdict = "PASSED" if report.success else "FAILED"
    colour = "#2e7d32" if report.success else "#c62828"
    rows = []
    for r in sorted(report.results, key=lambda r: (r.success, r.suite)):
        examples = "<br>".join(
            html.escape(
                f"{e.get('locator') or e.get('document_id')} #{e.get('section_id')} ({e.get('token_count')} tokens)"
            )
            for e in r.examples
        )
        mark = "✘" if not r.success else "no rows" if r.element_count == 0 else "✔"  # a check of nothing passes
        rows.append(
            f"<tr class={'ok' if r.success else 'bad'}><td>{mark}</td><td>{html.escape(r.suite)}</td>"
            f"<td>{html.escape(r.column)}</td><td>{html.escape(r.expectation)}</td>"
            f"<td>{html.escape(r.describe_params())}</td>"
            f"<td>{r.unexpected_percent:.2f}%</td><td>{r.element_count}</td><td>{examples}</td></tr>"
        )
    worst = "".join(
        f"<tr><td>{w['score']}</td><td>{html.escape(str(w['locator']))}</td>"
        f"<td>{html.escape(str(w['section_id']))}</td>"
        f"<td>{w['token_count']}</td><td>{w['merge_count']}</td><td>{w['split_count']}</td></tr>"
        for w in report.health.get("worst", [])
    )
    sources = "".join(
        f"<tr class={'bad' if v['failed'] else 'ok'}><td>{html.escape(name)}</td><td>{v['rows']}</td>"
        f"<td>{v['documents']}</td><td>{v['checks'] - len(v['failed'])} of {v['checks']}</td>"
        f"<td>{v['health_mean'] if v['health_mean'] is not None else ''}</td>"
        f"<td>{html.escape('; '.join(v['failed']))}</td></tr>"
        for name, v in sorted(report.per_source.items())
    )
    trend = "".join(
        f"<tr class={'ok' if t['success'] else 'bad'}><td>{html.escape(t['report'])}</td>"
        f"<td>{'passed' if t['success'] else 'FAILED'}</td><td>{t['failed']} of {t['expectations']}</td>"
        f"<td>{t['rows']}</td><td>{t['health_mean'] if t['health_mean'] is not None else ''}</td></tr>"
        for t in reversed(report.trend)
    )
    images = "".join(f'<img src="{p}" alt="{p}">' for p in plots)
    data_docs = "gx/uncommitted/data_docs/local_site/index.html"
    page = [
        f'<!doctype html><meta charset="utf-8"><title>{html.escape(title)}</title>',
        "<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:1100px;color:#222}"
        "table{border-collapse:collapse;width:100%}",
        "td,th{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}"
        "tr.bad{background:#fdecea}",
        f".verdict{{color:{colour};font-size:1.6em;font-weight:600}}img{{max-width:100%;margin:1em 0}}</style>",
        f"<h1>{html.escape(title)}</h1>" + (f"<p>{html.escape(written)}</p>" if written else ""),
        f"<p class=verdict>{verdict}: {len(report.failed())} of {len(report.results)} "
        f"expectations failed over {report.rows} rows</p>",
        f'<p>Great-expectations Data Docs: <a href="{data_docs}">{data_docs}</a></p>',
        "<h2>Per source</h2>"
        + _table(("source", "rows", "documents", "checks passed", "mean health", "failed"), sources),
        # the plots before the long table (some 130 rows pushed them thousands of pixels down)
        "<h2>Plots</h2><p>Each panel shows the rows its expectation checks (exempt rows, as in the table, left out)."
        f"</p>{images}",
        '<h2>Expectations</h2><p>Failing first; "no rows": nothing to check, so it passes.</p>'
        + _table(("", "suite", "check", "expectation", "parameters", "unexpected", "rows", "examples"), "".join(rows)),
        "<h2>Trend</h2>" + _table(("report (newest first)", "verdict", "failed", "rows", "mean health"), trend),
        "<h2>Least healthy sections</h2>"
        + _table(("score", "document", "section", "tokens", "merges", "splits"), worst),
    ]
    return "\n".join(page) + "\n"


def _table(headers: tuple[str, ...], body: str) -> str:
    """An HTML table: one header row, then `body` (its rows, already rendered)."""
    return "<table><tr>" + "".join(f"<th>{header}</th>" for header in headers) + f"</tr>{body}</table>"


def prune(root: Path, keep: int) -> None:
    """Keep the newest `keep` report folders (names start with their UTC time, so they sort by age)."""
    if keep <= 0 or not root.is_dir():
        return
    import shutil

    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink() and (p / "summary.json").exists())
    for old in folders[: max(0, len(folders) - keep)]:
        shutil.rmtree(old, ignore_errors=True)


def write_report(frame: pd.DataFrame, config: CairnConfig, dim: int, name: str, title: str) -> QualityReport:
    folder = Path(config.quality.report_dir) / f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{name}"
    folder.mkdir(parents=True, exist_ok=True)
    results = validate(frame, config, dim, folder) if not frame.empty else []
    report = QualityReport(
        success=all(r.success for r in results),
        report_dir=str(folder),
        rows=int(len(frame)),
        results=results,
        health=health_summary(frame) if not frame.empty else {"sections": 0},
        per_source=source_summary(frame, results) if not frame.empty else {},
    )
    keep = config.quality.keep_reports
    report.trend = trend(
        folder.parent, folder.name, report.to_dict(), min(TREND_REPORTS, keep) if keep > 0 else TREND_REPORTS
    )
    plots = plot(frame, config, folder) if not frame.empty else []
    written = f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, collection {config.milvus.collection} at "
    (folder / "index.html").write_text(
        render_html(report, title, plots, written + redact(config.milvus.uri)), encoding="utf-8"
    )
    if config.quality.report_uri:
        from cairn.quality.upload import destination

        report.uploaded_to = destination(folder, config.quality)
    (folder / "summary.json").write_text(json.dumps(report.to_dict(), indent=2, default=str), encoding="utf-8")
    if config.quality.report_uri:
        from cairn.quality.upload import upload_folder

        upload_folder(folder, config.quality, config.s3)
    point_latest(folder)
    prune(folder.parent, config.quality.keep_reports)
    return report


def report_markdown(report: QualityReport) -> str:
    lines = [
        f"### Cairn data quality: {'passed' if report.success else 'FAILED'} ({report.rows} rows)",
        "",
        f"Report: `{report.report_dir}`" + (f" (uploaded to {report.uploaded_to})" if report.uploaded_to else ""),
        "",
        "| source | rows | documents | checks passed | mean health |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {name} | {v['rows']} | {v['documents']} | {v['checks'] - len(v['failed'])} of {v['checks']} "
        f"| {v['health_mean']} |"
        for name, v in sorted(report.per_source.items())
    ]
    lines += ["", "| suite | check | parameters | success | unexpected % |", "|---|---|---|---|---|"]
    lines += [
        f"| {r.suite} | {r.column} | {r.describe_params()} | {'yes' if r.success else '**no**'} "
        f"| {r.unexpected_percent:.2f} |"
        for r in report.results
    ]
    return "\n".join(lines)
