"""How the `cairn` command runs a Prefect flow (ingest, backfill, reconcile --fix): reporting to the local Prefect
server when no PREFECT_API_URL is set (flows/prefect_server.py), progress on stderr, and the terminal left to
Cairn's own lines.

Prefect logs on the terminal too (its console handler, on the root logger): WARNING lines that repeat what the run
report prints next, and a failed task's or flow's traceback above the one useful line. The command shows Cairn's
lines only; Prefect's stay where Prefect keeps them (its run logs, when it ships logs to its API) and come back on
the terminal with `--verbose`, tracebacks included.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prefect import Flow

    from cairn.flows.prefect_server import LocalApi
    from cairn.flows.progress import ProgressKind
    from cairn.schemas.config import CairnConfig


def progress_kind(as_json: bool) -> ProgressKind:
    """How this invocation's run shows progress: a bar on stderr for a person at a terminal (never under
    --json); elsewhere (cron, CI, a worker's log) a line every few seconds on stderr; nothing under --quiet."""
    if logging.getLogger("cairn").getEffectiveLevel() > logging.WARNING:
        return "off"
    return "bar" if not as_json and sys.stderr.isatty() else "lines"


def verbose() -> bool:
    """Whether this invocation asked for --verbose (Cairn's loggers at INFO)."""
    return logging.getLogger("cairn").getEffectiveLevel() <= logging.INFO


def begin_api(config: CairnConfig) -> LocalApi | None:
    """The Prefect API a flow run of this command reports to: None when one is configured, else the local
    server (flows/prefect_server.py), started or found in the background from now on."""
    from cairn.flows.prefect_server import LocalApi

    return LocalApi.begin(config.runner.prefect_idle_seconds)


def run_flow(flow: Flow, config: CairnConfig, as_json: bool, api: LocalApi | None, **parameters: Any) -> dict:
    """Run `flow` over `config` on its configured task runner, reporting to `api` (begin_api), showing progress
    as `progress_kind` decides: its run report, also when the flow run failed on purpose because a source
    failed (after the other sources ran)."""
    from cairn.errors import SourcesFailed
    from cairn.flows.prefect_server import flow_api
    from cairn.flows.progress import set_progress_display
    from cairn.flows.runner import configured

    set_progress_display(progress_kind(as_json))
    quiet_prefect()
    try:
        with flow_api(api):
            return configured(flow, config)(config_path=str(config.config_path), **parameters)
    except SourcesFailed as failed:
        return failed.report


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
