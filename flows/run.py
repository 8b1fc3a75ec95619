"""One run over the configured sources (all, or the one named), whoever hosts it: a Prefect flow run
(flows/ingest.py: each step a task run, the reports published as artifacts; flows/tasks.py `PrefectHost`) or this
process alone (`InlineHost`: what `cairn ingest` does when no Prefect API is configured, cli/flowrun.py).

A run opens its resources once (flows/context.py), syncs each source (flows/sync.py: discover -> parse+chunk a
batch -> embed -> write -> retire), checks what it wrote with great-expectations, and publishes its run report.
One source failing never stops another. Nothing here imports Prefect: an inline run never pays for it.
"""

from __future__ import annotations

import logging
import sys
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from cairn.errors import QualityFailed, SourcesFailed
from cairn.flows.context import OpenIndex, RunContext
from cairn.flows.metrics_push import push_run_metrics
from cairn.flows.noop import Checked, check_unchanged, checks
from cairn.flows.options import Cleanup, RunOptions, Window
from cairn.flows.steps import InlineRunner, StepRunner
from cairn.flows.sync import SourceSync
from cairn.quality.worker import ReportWriter, report_writer
from cairn.schemas.collection import quote
from cairn.schemas.config import CairnConfig, load_config
from cairn.schemas.records import parse_day
from cairn.schemas.run_report import QualitySummary, RunReport
from cairn.schemas.source_config import SourceConfig

if TYPE_CHECKING:
    from cairn.quality.report_folder import QualityReport


class RunHost(Protocol):
    """Where a run's steps run and where it tells what it did."""

    @property
    def run_id(self) -> str: ...

    @property
    def runner(self) -> StepRunner:
        """Every step call goes through it (flows/steps.py)."""
        ...

    @property
    def log(self) -> logging.Logger | logging.LoggerAdapter: ...

    def publish_run(self, report: RunReport, title: str) -> None: ...

    def publish_quality(self, result: QualityReport) -> None: ...


@dataclass(frozen=True)
class InlineHost:
    """The run in this process alone: no flow run, no task runs, no artifacts. The run report (the CLI prints it;
    --json for a script), the metrics it pushes ([metrics]) and the quality report folder are its record. Its log
    lines are the ones a flow run's logger would carry: INFO, so the terminal shows them with --verbose only
    (cli/flowrun.py), as it shows Prefect's; the run report says the same."""

    run_id: str
    runner: StepRunner
    log: logging.LoggerAdapter

    @classmethod
    def new(cls) -> InlineHost:
        return cls(str(uuid.uuid4()), InlineRunner(), _AtInfo(logging.getLogger("cairn.run"), {}))

    def publish_run(self, report: RunReport, title: str) -> None:
        pass  # nowhere to publish to: the CLI prints the report

    def publish_quality(self, result: QualityReport) -> None:
        pass


class _AtInfo(logging.LoggerAdapter):
    """A warning of the run, logged at INFO: the run report carries it to the terminal already."""

    def warning(self, msg: object, *args: Any, **kwargs: Any) -> None:
        self.info(msg, *args, **kwargs)


def current_host() -> RunHost:
    """The Prefect flow run this code runs in (its run id, its task runs, its artifacts), else this process."""
    if "prefect" in sys.modules:  # never imported: certainly no flow run
        from cairn.flows.tasks import PrefectHost

        host = PrefectHost.current()
        if host is not None:
            return host
    return InlineHost.new()


def ingest(
    config_path: str | None = None,
    source: str | None = None,
    cleanup: Cleanup | None = None,
    wait_seconds: float = 0.0,
    allow_mass_delete: bool = False,
) -> dict:
    """Bring the collection in line with the configured sources (all, or the one named). The run fails when a
    source fails as a whole (after the others ran); documents that fail are in the report. The Prefect flow
    `cairn-ingest` is this function (flows/ingest.py); its result is the run report as JSON data."""
    options = ingest_options(cleanup, wait_seconds, allow_mass_delete)
    return concluded(run_sources(load_config(config_path), source, options))


def ingest_options(
    cleanup: Cleanup | None = None, wait_seconds: float = 0.0, allow_mass_delete: bool = False
) -> RunOptions:
    """What `ingest`'s parameters ask of the run."""
    return RunOptions(cleanup=cleanup, wait_seconds=wait_seconds, allow_mass_delete=allow_mass_delete)


def backfill(
    config_path: str | None = None,
    source: str | None = None,
    since: str | None = None,
    until: str | None = None,
    commits: int | None = None,
    wait_seconds: float = 0.0,
) -> dict:
    """Re-process the documents updated in [since, until) (either end open; neither: all of them) through the
    ingest path, idempotently; with keep_history, past versions in the window (or written by the last
    `commits` commits) too, for sources that have them. The Prefect flow `cairn-backfill` is this function
    (flows/ingest.py); its result is the run report as JSON data."""
    options = backfill_options(since, until, commits, wait_seconds)
    return concluded(run_sources(load_config(config_path), source, options))


def backfill_options(
    since: str | None = None, until: str | None = None, commits: int | None = None, wait_seconds: float = 0.0
) -> RunOptions:
    """What `backfill`'s parameters ask of the run."""
    window = Window(parse_day(since), parse_day(until), commits)
    return RunOptions(backfill=window, wait_seconds=wait_seconds, title="Cairn backfill")


def concluded(report: RunReport) -> dict[str, object]:
    """The run report as JSON data, the result of a flow run (`fail_on_sources` first)."""
    fail_on_sources(report)
    return report.to_dict()


def fail_on_sources(report: RunReport) -> None:
    """A run with a source that failed as a whole fails (SourcesFailed, carrying its report as JSON data), after
    every other source ran and the report was published."""
    if report.failed_sources:
        failed = ", ".join(report.failed_sources)
        raise SourcesFailed(f"source(s) failed: {failed}; see the run report", report.to_dict())


def run_sources(config: CairnConfig, source: str | None, options: RunOptions) -> RunReport:
    """Sync the configured sources (all, or the one named) in one run: its report. Its first step is the unchanged
    check (flows/noop.py): when nothing changed, its report is the run's and nothing heavy starts. A source that
    failed as a whole is in the report (`failed_sources`: `fail_on_sources` fails the run for it); a data-quality
    failure of a source whose quality_policy is "fail" raises QualityFailed, when no source failed as a whole."""
    started = time.perf_counter()
    host = current_host()
    selected = [config.source(source)] if source else config.sources
    with OpenIndex.open(config, options) as index:
        checked = check_unchanged(index, selected, f"unchanged-{host.run_id}") if checks(index) else Checked()
        if checked.unchanged is not None:
            report = checked.unchanged
            report.seconds = time.perf_counter() - started
            host.publish_run(report, options.title)
            push_run_metrics(config.metrics, report)
            return report
        report = RunReport(run_id=host.run_id)
        checks_at = config.quality  # the checks server found, or started to warm up meanwhile (quality/server.py)
        check = QualityCheck(report_writer(checks_at.on_ingest, checks_at.worker_idle_seconds), host)
        with RunContext.around(index, host.runner) as run:
            sync_sources(run, selected, checked, report, host)
        written_to, dim = config.model_copy(update={"milvus": index.store.config}), run.steps.embedder.encoder.dim
    quality = None
    if config.quality.on_ingest and report.written_documents:
        checked_at = time.perf_counter()
        label = ", ".join(report.written_documents)  # the sources it checks
        quality = host.runner.call(check, label, written_to, report.written_documents, dim, report.run_id)
        report.quality = QualitySummary(
            success=quality.success,
            report_dir=quality.report_dir,
            failed=[f"{r.suite}: {r.column}" for r in quality.failed()],
            seconds=round(time.perf_counter() - checked_at, 3),
        )
    report.seconds = time.perf_counter() - started
    host.publish_run(report, options.title)
    push_run_metrics(config.metrics, report)
    if report.failures:
        host.log.warning("%d input(s) failed; see the run report", len(report.failures))
    for warning in report.warnings:
        host.log.warning("%s: %s: %s", warning.source, warning.document, warning.error)
    if quality is not None and not quality.success and not report.failed_sources:
        enforce_quality_policy(quality, [s.name for s in selected if s.quality_policy == "fail"], host)
    return report


def sync_sources(
    run: RunContext, selected: list[SourceConfig], checked: Checked, report: RunReport, host: RunHost
) -> None:
    """Each selected source synced into `report` (one whose listing failed in the first step failed with that
    reason, not listed again), then what the run did to the index."""
    for source_config in selected:
        began = time.perf_counter()
        failed = checked.failed.get(source_config.name)
        part = failed if failed is not None else SourceSync(run, source_config).sync()
        outcome = report.close_source(source_config.name, part, time.perf_counter() - began)
        run.source_done(source_config.name, not outcome.failed)
    report.index = index = run.conclude()
    report.unconfigured_sources = run.unconfigured_sources()
    if index is not None and index.pending:
        host.log.warning(
            "collection %s is being rebuilt beside %s (%s); the switch waits for: %s",
            index.collection,
            index.serving,
            index.rebuild,
            ", ".join(index.waiting_for),
        )


def enforce_quality_policy(quality: QualityReport, strict_sources: list[str], host: RunHost) -> None:
    """Fail the run when a source whose quality_policy is "fail" failed an expectation; else warn."""
    failed = set(strict_sources) & quality.failed_sources()
    if failed:
        raise QualityFailed(
            f'data quality failed for {", ".join(sorted(failed))} (quality_policy = "fail"); '
            f"report: {quality.report_dir}/index.html"
        )
    host.log.warning("data-quality expectations failed; report: %s/index.html", quality.report_dir)


def written_expr(written: dict[str, list[str]]) -> str:
    """A filter for the current rows of these documents, per source (whole sources when a run wrote many)."""
    from cairn.schemas.collection import in_list

    parts = []
    for source, ids in written.items():
        scope = f"source_name == {quote(source)}"
        parts.append(f"({scope} and {in_list('document_id', ids)})" if len(ids) <= 2000 else f"({scope})")
    return f"is_current == true and ({' or '.join(parts)})"


@dataclass(frozen=True, eq=False)  # one per run, told apart by identity
class QualityCheck:
    """The run's data-quality step: great-expectations over the current rows of the documents this run wrote, a
    report folder (by `write`, quality/worker.py), and its summary published by the host. Their figures come from
    the derived ledger the run kept in step (index/derived.py), where their outcomes are kept for later reports;
    read from the collection only when it is not (whole sources when a run wrote many)."""

    name: ClassVar[str] = "check-quality"
    retried: ClassVar[bool] = False
    in_flow: ClassVar[bool] = False
    write: ReportWriter
    host: RunHost

    def run(self, config: CairnConfig, written: dict[str, list[str]], dim: int, run_id: str) -> QualityReport:
        from cairn.index.derived import Rows
        from cairn.quality import scope
        from cairn.quality.frames import served_frame

        documents = [d for ids in written.values() for d in ids]
        frame, ledger = served_frame(config, dim, written_expr(written), Rows(documents=documents))
        title = f"Cairn data quality, run {run_id}"
        scoped = scope.after_ingest(run_id, written, ledger)
        result = self.write(frame, config, dim, f"run-{run_id[:8]}", title, scoped)
        self.host.publish_quality(result)
        return result
