"""How the `cairn` command runs an ingest, a backfill or a reconcile --fix: in its own process without Prefect when
no Prefect API is configured (flows/run.py InlineHost: no server to start or reach, nothing of Prefect imported),
else as a Prefect flow run, reporting to the configured API or, with `[runner] local_prefect_server` (or a Dask
runner), to the local Prefect server (flows/prefect_server.py); progress on stderr, and the terminal left to
Cairn's own lines.

Prefect logs on the terminal too (its console handler, on the root logger): WARNING lines that repeat what the run
report prints next, and a failed task's or flow's traceback above the one useful line. The command shows Cairn's
lines only; Prefect's stay where Prefect keeps them (its run logs, when it ships logs to its API) and come back on
the terminal with `--verbose`, tracebacks included.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from cairn.flows.prefect_server import LocalApi
    from cairn.flows.progress import ProgressKind
    from cairn.schemas.config import CairnConfig
    from cairn.schemas.run_report import RunReport


def progress_kind(as_json: bool) -> ProgressKind:
    """How this invocation's run shows progress: a bar on stderr for a person at a terminal (never under
    --json); elsewhere (cron, CI, a worker's log) a line every few seconds on stderr; nothing under --quiet."""
    if logging.getLogger("cairn").getEffectiveLevel() > logging.WARNING:
        return "off"
    return "bar" if not as_json and sys.stderr.isatty() else "lines"


def verbose() -> bool:
    """Whether this invocation asked for --verbose (Cairn's loggers at INFO)."""
    return logging.getLogger("cairn").getEffectiveLevel() <= logging.INFO


@dataclass(frozen=True)
class Launch:
    """Where this command's run runs. `inline`: in this process, without Prefect (flows/run.py InlineHost): no
    Prefect API is configured, `[runner] kind` is "thread" and `local_prefect_server` is off. Otherwise a Prefect
    flow run, reporting to `api`: the local server (flows/prefect_server.py), started or found in the background
    from `begin_run` on, or None for the configured API."""

    inline: bool
    api: LocalApi | None = None


def begin_run(config: CairnConfig) -> Launch:
    """How a run of this command will run, decided (and the embedded index's server and the local Prefect server
    set starting) before the run's modules import; for a flow run, the data-quality checks server found or set
    starting too, as the run will check what it writes. A run in this process asks for that server itself, after
    its first step found work (flows/noop.py): an unchanged run starts no checks."""
    from cairn.flows.prestart import start_index_server

    start_index_server(config.milvus)  # on the other core while the run's modules import (flows/prestart.py)
    if runs_inline(config):
        return Launch(inline=True)
    if config.quality.on_ingest:  # the checks server found, or started from now on (quality/worker.py)
        from cairn.quality.worker import report_writer

        report_writer(idle_seconds=config.quality.worker_idle_seconds)
    from cairn.flows.prefect_server import LocalApi

    return Launch(inline=False, api=LocalApi.begin(config.runner.prefect_idle_seconds))


def runs_inline(config: CairnConfig) -> bool:
    """Whether a run of this command runs in this process without Prefect: no Prefect API is configured, the
    runner is the thread pool (Dask's model work is Prefect tasks) and no local Prefect server is asked for."""
    from cairn.flows.prefect_api import prefect_api_configured

    runner = config.runner
    return runner.kind == "thread" and not runner.local_prefect_server and not prefect_api_configured()


Run = Literal["ingest", "backfill"]


def run_flow(run: Run, config: CairnConfig, as_json: bool, launch: Launch, **parameters: Any) -> RunReport:
    """Run `run` (flows/run.py's ingest or backfill) over `config` as `launch` says, showing progress as
    `progress_kind` decides: its run report, also when the run failed on purpose because a source failed (after
    the other sources ran)."""
    from cairn.errors import SourcesFailed
    from cairn.flows.progress import set_progress_display
    from cairn.schemas.run_report import RunReport

    set_progress_display(progress_kind(as_json))
    try:
        with hosting(launch):
            return call_run(run, config, launch, **parameters)
    except SourcesFailed as failed:  # a flow run's failure carries its report as JSON data
        return RunReport.from_dict(failed.report)


@contextmanager
def hosting(launch: Launch) -> Iterator[None]:
    """For the block, what `launch`'s runs need: Prefect's settings pointed at its API (a local server's lease
    held), Prefect's terminal lines quietened; nothing for a run in this process."""
    if launch.inline:
        yield
        return
    import cairn.flows.ingest  # noqa: F401 - the flows, and Prefect's handlers set up, before they are quietened
    from cairn.flows.prefect_server import flow_api

    quiet_prefect()
    with flow_api(launch.api):
        yield


def call_run(run: Run, config: CairnConfig, launch: Launch, **parameters: Any) -> RunReport:
    """`run` over `config` as `launch` says, inside `hosting(launch)`: in this process (flows/run.py run_sources, the
    record itself), or as a flow run on the configured task runner (its result, the report as JSON data, read
    back). Either fails (SourcesFailed) when a source failed as a whole."""
    from cairn.schemas.run_report import RunReport

    if launch.inline:
        from cairn.flows import run as runs

        source = parameters.pop("source", None)
        options = runs.ingest_options(**parameters) if run == "ingest" else runs.backfill_options(**parameters)
        report = runs.run_sources(config, source, options)
        runs.fail_on_sources(report)  # as the flow run would
        return report
    from cairn.flows.dask_runner import configured
    from cairn.flows.ingest import backfill_flow, ingest_flow

    flow = ingest_flow if run == "ingest" else backfill_flow
    return RunReport.from_dict(configured(flow, config)(config_path=str(config.config_path), **parameters))


class _OffTheTerminal(logging.Filter):
    """On a handler that writes to the terminal and is not Cairn's: nothing passes unless --verbose."""

    def filter(self, record: logging.LogRecord) -> bool:
        return verbose()


def quiet_prefect() -> None:
    """Every handler that writes to the terminal (stderr or stdout) and is not Cairn's own (Prefect's console
    handler on the root logger and its loggers, the API server's) passes nothing unless --verbose. Prefect
    configured them when it was imported; handlers that ship logs to Prefect's API, or write to a file, keep
    everything."""
    named = logging.Logger.manager.loggerDict.values()
    loggers = [logging.getLogger(), *(lg for lg in named if isinstance(lg, logging.Logger))]
    streams = {id(s) for s in (sys.stderr, sys.stdout, sys.__stderr__, sys.__stdout__)}
    for handler in {h for lg in loggers for h in lg.handlers}:
        terminal = isinstance(handler, logging.StreamHandler) and id(handler.stream) in streams
        if terminal and not getattr(handler, "cairn_cli", False):
            if not any(isinstance(f, _OffTheTerminal) for f in handler.filters):
                handler.addFilter(_OffTheTerminal())
