"""A run's first step: an ingest that would change nothing, recognised before anything heavy starts.

Most of an unchanged re-ingest's wall time was fixed cost around a run that had nothing to do: the model, a Dask
cluster, the data-quality worker (and, from the shell, a Prefect server starting). So a run first compares every
selected source with the collection exactly as its syncs do (flows/discovery.py), without the model or a write,
through the index the run has opened (flows/context.py OpenIndex: one opening, the writer slot taken in turns).
When no source has anything to index or remove, that comparison is the run: its report is the run's, and nothing
else starts. It stops listing a source at the first document to index (a listing without a discover step): the
run lists everything then, so a run with edits pays one listing of that source, not two.

Only where no Prefect API is configured (flows/prefect_api.py: a run in the CLI's own process, or on the local
Prefect server): with a Prefect server every run syncs in full as its flow run. Not for a backfill (it re-processes
on purpose), a new index or a rebuild beside the serving one (the syncs write those).

It lists outside the writer slot, which it takes only to read each source's ledger: a source that lists slowly
holds up no other run. A source whose listing fails (past its budget, unreachable) ends the check, and is failed
with that reason in the run's report: the run does not list it a second time (`Checked.failed`).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field

from cairn.errors import SourceError
from cairn.flows.context import OpenIndex
from cairn.flows.discovery import list_source, plan_listed
from cairn.flows.options import RunOptions
from cairn.flows.prefect_api import prefect_api_configured
from cairn.index.derived import DerivedLedger
from cairn.schemas.config import CairnConfig
from cairn.schemas.run_report import SOURCE_FAILURE, IndexReport, RunReport, SourceReport
from cairn.schemas.source_config import SourceConfig


@dataclass
class Checked:
    """What the first step found: the run's whole report when nothing is to be done (`unchanged`), else the
    sources whose listing failed in it, each as its part of the report (failed with the reason)."""

    unchanged: RunReport | None = None
    failed: dict[str, SourceReport] = field(default_factory=dict)


def checks(index: OpenIndex) -> bool:
    """Whether a run over `index` starts with the unchanged check (module doc)."""
    return index.options.backfill is None and index.settled and not prefect_api_configured()


def check_unchanged(index: OpenIndex, selected: list[SourceConfig], run_id: str) -> Checked:
    """Each selected source compared with the collection, until one has work or fails to list; the report
    `run_id` when none has. Anything else that goes wrong (a ledger unreadable, a damaged row) is left to the
    syncs, which meet it and report it."""
    started = time.perf_counter()
    report = RunReport(run_id=run_id)
    try:
        for source_config in selected:
            began = time.perf_counter()
            with index.writing():  # bringing a derived ledger in step rewrites it
                ledger = index.store.ledger(source_config.name)
                index.state.observe(index.store.mark())  # cursors saved at another mark are dropped (index/state.py)
            try:
                listed = list_source(source_config, index.config, ledger, index.state, index.options)
            except SourceError as exc:
                part = SourceReport()
                part.fail(source_config.name, SOURCE_FAILURE, str(exc))
                return Checked(failed={source_config.name: part})
            planned = plan_listed(listed, ledger, source_config, index.options)
            if planned.has_work:
                derived = getattr(index.store, "derived", None)
                if isinstance(derived, DerivedLedger):  # the sync reads it again otherwise
                    derived.hand_on(source_config.name, planned.ledger)
                return Checked()
            part = SourceReport()
            planned.account(part, source_config.name)
            report.close_source(source_config.name, part, time.perf_counter() - began)
    except Exception:  # noqa: BLE001 - a failing ledger, a damaged index: the syncs meet it and report it
        return Checked()
    serving = index.target.collection if index.target is not None else index.config.milvus.collection
    report.index = IndexReport(serving, serving)
    report.unconfigured_sources = index.unconfigured_sources()
    report.seconds = time.perf_counter() - started
    return Checked(unchanged=report)


def unchanged_run(
    config: CairnConfig, source: str | None = None, options: RunOptions | None = None
) -> RunReport | None:
    """The check alone, without a run around it: the report when an ingest of `source` (or every source) would
    index and remove nothing, else None (the index busy, no collection yet, another encoder, work to do)."""
    options = options or RunOptions()
    if options.backfill is not None or prefect_api_configured():
        return None
    selected = [config.source(source)] if source else config.sources
    try:
        with OpenIndex.open(config, options) as index:
            return check_unchanged(index, selected, f"unchanged-{uuid.uuid4()}").unchanged if checks(index) else None
    except Exception:  # noqa: BLE001 - busy, unreachable, damaged: a run meets it and reports it
        return None
