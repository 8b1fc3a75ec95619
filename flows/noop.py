"""An ingest that would change nothing, recognised without starting a flow run.

From the shell, most of an unchanged re-ingest's wall time was Prefect's temporary server starting (8-18 s)
around a run that took a second. Before starting the flow, the CLI asks `unchanged_run`: it discovers every
selected source and compares it with the collection exactly as the flow's first step does (flows/discovery.py
plan_source), without Prefect, the model or a write. When no source has anything to index or remove, that
comparison is the run: its report is returned and no flow run is made. It stops listing a source at the first
document to index (plan_source without a discover step): the flow lists everything again anyway, so a run with
edits pays one listing, not two. Only where no Prefect API is configured (flows/prefect_api.py; the CLI's runs
then run in its own process, or report to the local Prefect server when asked): with a Prefect server, every run is
recorded as a flow run. Anything
else (work to do, a source that fails, an index another run holds, no collection yet, another encoder, a rebuild
under way) returns None and the flow runs as usual, so every outcome that is not "nothing to do" is still
recorded by Prefect.

It lists outside the writer lock, which it takes (never waiting) only to read each source's ledger: a source that
lists slowly holds up no other run. A source whose listing fails (past its budget, unreachable) is recorded in
`failed`, so that the flow run fails it with that reason instead of listing it again.
"""

from __future__ import annotations

import time
import uuid
from contextlib import ExitStack

from cairn.embedding import encoder_for
from cairn.errors import SourceError
from cairn.flows.discovery import list_source, plan_listed
from cairn.flows.metrics_push import push_run_metrics
from cairn.flows.options import RunOptions
from cairn.flows.prefect_api import prefect_api_configured
from cairn.index.derived import DerivedLedger
from cairn.index.generations import Generations, open_serving
from cairn.index.lock import writer_lock
from cairn.index.state import SourceState
from cairn.index.store import MilvusStore
from cairn.schemas.config import CairnConfig
from cairn.schemas.run_report import RunReport, SourceReport


def unchanged_run(
    config: CairnConfig,
    source: str | None = None,
    options: RunOptions | None = None,
    failed: dict[str, str] | None = None,
) -> dict | None:
    """The run report when an ingest of `source` (or every source) would index and remove nothing, else None
    (`options`: what the caller asked, by default nothing beyond the configuration). A source whose listing
    failed goes into `failed` (name -> the reason), for the flow run that follows."""
    options = options or RunOptions()
    if options.backfill is not None or prefect_api_configured():
        return None  # a backfill re-processes on purpose; a Prefect server records every run
    started = time.perf_counter()
    selected = [config.source(source)] if source else config.sources
    report = RunReport(run_id=f"unchanged-{uuid.uuid4()}")
    try:
        with ExitStack() as stack:
            encoder = encoder_for(config.embedding)  # its identity and dimension: the weights are not loaded
            with writer_lock(config.milvus, 0.0):
                reader = stack.enter_context(open_serving(config.milvus))  # nothing served: NoCollection
                index = Generations(reader.client, config.milvus).status()
                if index["serving"] != reader.collection or index["encoder"] != encoder.identity or index["building"]:
                    return None  # unlabelled, another encoder, a build under way: the flow labels, rebuilds
                derived = stack.enter_context(DerivedLedger.open(config.ledger_folder, reader.config))
                store = MilvusStore(reader.config, encoder.dim, reader.connection, derived)
                store.ensure_collection()  # the schema check a writer makes (and the load)
            state = SourceState(config.state_path, config.milvus.identity)
            stack.callback(state.close)
            for source_config in selected:
                began = time.perf_counter()
                with writer_lock(config.milvus, 0.0):  # bringing a derived ledger in step rewrites it
                    ledger = store.ledger(source_config.name)
                    state.observe(store.mark())  # cursors saved at another mark are dropped (index/state.py)
                try:
                    listed = list_source(source_config, config, ledger, state, options)
                except SourceError as exc:
                    if failed is not None:
                        failed[source_config.name] = str(exc)
                    return None
                planned = plan_listed(listed, ledger, source_config, options)
                if planned.has_work:
                    derived.hand_on(source_config.name, planned.ledger)  # the flow run reads it again otherwise
                    return None
                part = SourceReport()
                planned.account(part, source_config.name)
                report.close_source(source_config.name, part, time.perf_counter() - began)
            report.unconfigured_sources = sorted(derived.sources() - {s.name for s in config.sources})
    except Exception:  # noqa: BLE001 - busy, unreachable, damaged, a failing source: the flow meets it and reports it
        return None
    report.index = {"collection": index["serving"], "serving": index["serving"]}
    report.seconds = time.perf_counter() - started
    data = report.to_dict()
    push_run_metrics(config.metrics, data)
    return data
