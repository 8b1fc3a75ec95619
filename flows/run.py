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
from cairn.flows.context import RunContext
from cairn.flows.metrics_push import push_run_metrics
from cairn.flows.options import Cleanup, RunOptions, Window
from cairn.flows.steps import InlineRunner, StepRunner
from cairn.flows.sync import SourceSync
from cairn.quality.worker import Writer, report_writer
from cairn.schemas.collection import quote
from cairn.schemas.config import CairnConfig, load_config
from cairn.schemas.records import parse_day
from cairn.schemas.run_report import RunReport
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
    listing_failed: dict[str, str] | None = None,
) -> dict:
    """Bring the collection in line with the configured sources (all, or the one named). The run fails when a
    source fails as a whole (after the others ran); documents that fail are in the report. `listing_failed`: the
    sources whose listing failed in the CLI's no-op check just before (flows/noop.py), and why: they fail with
    that reason, not listed a second time. The Prefect flow `cairn-ingest` is this function (flows/ingest.py)."""
    options = RunOptions(
        cleanup=cleanup,
        wait_seconds=wait_seconds,
        allow_mass_delete=allow_mass_delete,
        listing_failed=listing_failed or {},
    )
    return run_sources(config_path, source, options)


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
    (flows/ingest.py)."""
    window = Window(parse_day(since), parse_day(until), commits)
    return run_sources(
        config_path, source, RunOptions(backfill=window, wait_seconds=wait_seconds, title="Cairn backfill")
    )


def run_sources(config_path: str | None, source: str | None, options: RunOptions) -> dict:
    """Sync the configured sources (all, or the one named) in one run; the run report as a dict."""
    started = time.perf_counter()
    host = current_host()
    config = load_config(config_path)
    selected = [config.source(source)] if source else config.sources
    report = RunReport(run_id=host.run_id)
    write = report_writer(config.quality.on_ingest)  # great-expectations warms up meanwhile
    written_to, dim = sync_sources(config, selected, options, report, host)
    quality = None
    if config.quality.on_ingest and report.written_documents:
        checked = time.perf_counter()
        check = QualityCheck(write, host)
        label = ", ".join(report.written_documents)  # the sources it checks
        quality = host.runner.call(check, label, written_to, report.written_documents, dim, report.run_id)
        report.quality = {
            "success": quality.success,
            "report_dir": quality.report_dir,
            "failed": [f"{r.suite}: {r.column}" for r in quality.failed()],
            "seconds": round(time.perf_counter() - checked, 3),
        }
    report.seconds = time.perf_counter() - started
    host.publish_run(report, options.title)
    push_run_metrics(config.metrics, report.to_dict())
    if report.failures:
        host.log.warning("%d input(s) failed; see the run report", len(report.failures))
    for warning in report.warnings:
        host.log.warning("%s: %s: %s", warning.source, warning.document, warning.error)
    if report.failed_sources:  # the run fails, after every other source ran and the report was published
        raise SourcesFailed(
            f"source(s) failed: {', '.join(report.failed_sources)}; see the run report", report.to_dict()
        )
    if quality is not None and not quality.success:
        enforce_quality_policy(quality, [s.name for s in selected if s.quality_policy == "fail"], host)
    return report.to_dict()


def sync_sources(
    config: CairnConfig, selected: list[SourceConfig], options: RunOptions, report: RunReport, host: RunHost
) -> tuple[CairnConfig, int]:
    """Each selected source synced into `report`; the configuration of the collection written, and its dimension."""
    with RunContext.open(config, options, host.runner) as run:
        for source_config in selected:
            began = time.perf_counter()
            part = SourceSync(run, source_config).sync()
            report.close_source(source_config.name, part, time.perf_counter() - began)
            run.source_done(source_config.name, report.per_source[source_config.name]["status"] != "failed")
        report.index = run.conclude()
        report.unconfigured_sources = run.unconfigured_sources()
        dim, written = run.steps.embedder.encoder.dim, config.model_copy(update={"milvus": run.store.config})
    if report.index.get("switch") == "pending":
        host.log.warning(
            "collection %s is being rebuilt beside %s (%s); the switch waits for: %s",
            report.index["collection"],
            report.index["serving"],
            report.index["rebuild"],
            ", ".join(report.index["waiting_for"]),
        )
    return written, dim


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
    write: Writer
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
