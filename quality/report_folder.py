"""A data-quality report folder: summary.json, a dashboard page, plots, GE's Data Docs, optional S3.

report_dir/
  index.html          the page to open (quality/dashboard.py): verdict, when, index, scope, sources, charts
                      against their bands, trend, expectations; self-contained, it makes no request
  summary.json        {"success", "report_dir", "rows", "written_at", "index", "scope", "results": [{"expectation",
                       "column", "success", "unexpected_percent", "suite", "examples", ...}], "health",
                       "per_source", "trend"}
  token_counts.svg    token counts per suite and chunk type (sections, children, abstracts), the SLA band shaded
  health.svg          chunk_health_score per suite, the threshold dashed
<report_root>/latest  a link to the newest full report folder (quality/history.py)
  gx/uncommitted/data_docs/local_site/index.html   great-expectations Data Docs
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from cairn.quality import scope as scopes
from cairn.quality import stored
from cairn.quality.checks import Result, validate
from cairn.quality.dashboard import panel, render_html
from cairn.quality.figures import Distribution, distributions, health_summary, source_summary
from cairn.quality.history import latest_target, point_latest, report_folders, trend
from cairn.quality.plots import figure
from cairn.quality.tallies import results_of, tally
from cairn.redact import redact
from cairn.schemas.config import CairnConfig

Validate = Callable[[pd.DataFrame, CairnConfig, int, Path], pd.DataFrame]  # quality/checks.py validate's signature
_CHECK: ContextVar[Validate] = ContextVar("cairn_quality_check", default=validate)
TREND_REPORTS = 10  # the full reports the trend shows (fewer when keep_reports keeps fewer)


@dataclass
class QualityReport:
    success: bool
    report_dir: str
    rows: int
    results: list[Result] = field(default_factory=list)
    health: dict = field(default_factory=dict)
    uploaded_to: str | None = None
    per_source: dict[str, dict] = field(default_factory=dict)  # source -> rows, documents, checks, failed, health
    trend: list[dict] = field(default_factory=list)  # the last full reports, oldest first, this one last if full
    written_at: str = ""  # "2026-11-27 10:59:06 UTC"
    index: str = ""  # "collection cairn at data/index/cairn.db" (credentials redacted)
    scope: dict = field(default_factory=dict)  # Scope.to_dict(): "kind" ("full", ...) and "description"
    checked_now: int = 0  # rows great-expectations checked in this report (the others were checked before)
    unchecked: int = 0  # rows of the scope left out: rewritten by a writer while being checked (the next report's)

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
            "written_at": self.written_at,
            "index": self.index,
            "scope": self.scope,
            "checked_now": self.checked_now,
            "unchecked": self.unchecked,
        }


@contextmanager
def checked_by(check: Validate) -> Iterator[None]:
    """Within the block (in this thread or task), `write_report` has great-expectations run by `check`, which
    takes quality/checks.py validate's arguments and returns what it returns."""
    token = _CHECK.set(check)
    try:
        yield
    finally:
        _CHECK.reset(token)


def prune(root: Path, keep: int) -> None:
    """Keep the newest `keep` report folders (names start with their UTC time, so they sort by age), and the one
    `latest` leads to whatever its age (the newest full report, when many partial ones followed it)."""
    if keep <= 0 or not root.is_dir():
        return
    import shutil

    kept = latest_target(root)
    folders = report_folders(root)
    for old in folders[: max(0, len(folders) - keep)]:
        if kept is None or old.resolve() != kept:
            shutil.rmtree(old, ignore_errors=True)


def write_plots(folder: Path, figures: list[Distribution], results: list[Result]) -> list[str]:
    """token_counts.svg and health.svg: the page's panels, stacked, as files of their own."""
    written = []
    for name, kinds in (("token_counts.svg", ("full_text", "child", "abstract")), ("health.svg", ("health",))):
        panels = [
            panel(d, d.result(results), f"{d.suite}: {'score' if d.kind == 'health' else 'tokens'}")
            for d in figures
            if d.kind in kinds
        ]
        if panels:
            (folder / name).write_text(figure(panels), encoding="utf-8")
            written.append(name)
    return written


def new_folder(root: Path, name: str) -> Path:
    """A report folder of its own: `name`, or `name-2`, `name-3`... when a report of the same second and scope
    has it (a report over what changed takes well under a second: two in a row shared one, and great-expectations'
    context in it)."""
    root.mkdir(parents=True, exist_ok=True)
    for n in range(1, 1000):
        folder = root / (name if n == 1 else f"{name}-{n}")
        try:
            folder.mkdir()
            return folder
        except FileExistsError:
            continue
    raise FileExistsError(f"{root / name}: a thousand report folders of that name in one second")


def write_report(
    frame: pd.DataFrame,
    config: CairnConfig,
    dim: int,
    name: str,
    title: str,
    scope: scopes.Scope | None = None,
) -> QualityReport:
    """Check the rows of `frame` (their figures) with great-expectations and write the report folder under
    [quality] report_dir; `scope` says what the report covers (by default: a full report). With a derived ledger
    in the scope (quality/scope.py), the frame's outcomes are kept there and the report counts every row of the
    scope's that has one, checked now or before (quality/stored.py); else it is over the frame. `latest` moves to
    it when it is full (or no full report exists yet). great-expectations runs here, or where `checked_by` says
    (the checks server that keeps it imported, quality/server.py)."""
    scope = scope or scopes.full_report()
    now = time.gmtime()
    folder = new_folder(Path(config.quality.report_dir), f"{time.strftime('%Y%m%dT%H%M%SZ', now)}-{name}")
    checked = _CHECK.get()(frame, config, dim, folder) if not frame.empty else frame.assign(checked=0, failed=0)
    limit, unchecked, lowest = config.quality.examples, 0, None
    if scope.ledger is None:
        counts, view = tally(checked, limit), checked
    else:
        from cairn.index.derived import DerivedLedger

        path, rows = scope.ledger
        with DerivedLedger(path) as derived:
            stored.store(derived, checked, config, dim)
            counts, view = stored.tallies(derived, rows, limit), stored.view(derived, rows)
            unchecked, lowest = stored.unchecked_rows(derived, rows), stored.least_healthy(derived, rows, 10)
    results = results_of(counts, config, dim)
    figures = distributions(view, config) if not view.empty else []
    report = QualityReport(
        success=all(r.success for r in results),
        report_dir=str(folder),
        rows=int(len(view)),
        results=results,
        health=health_summary(view, lowest) if not view.empty else {"sections": 0},
        per_source=source_summary(view, results, figures) if not view.empty else {},
        written_at=time.strftime("%Y-%m-%d %H:%M:%S UTC", now),
        index=f"collection {config.milvus.collection} at {redact(config.milvus.uri)}",
        scope=scope.to_dict(),
        checked_now=int(len(frame)),
        unchecked=unchecked,
    )
    keep = config.quality.keep_reports
    report.trend = trend(
        folder.parent, folder.name, report.to_dict(), min(TREND_REPORTS, keep) if keep > 0 else TREND_REPORTS
    )
    write_plots(folder, figures, results)
    (folder / "index.html").write_text(render_html(report, title, figures), encoding="utf-8")
    if config.quality.report_uri:
        from cairn.quality.upload import destination

        report.uploaded_to = destination(folder, config.quality)
    (folder / "summary.json").write_text(json.dumps(report.to_dict(), indent=2, default=str), encoding="utf-8")
    if config.quality.report_uri:
        from cairn.quality.upload import upload_folder

        upload_folder(folder, config.quality, config.s3)
    point_latest(folder, scope.full)
    prune(folder.parent, config.quality.keep_reports)
    return report
