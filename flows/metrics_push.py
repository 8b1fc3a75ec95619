"""An ingest or backfill run's figures, pushed to a Prometheus Pushgateway when `[metrics] pushgateway_url` is
set (nothing is pushed when it is not): a batch job ends before any scrape could see it.

One group per source (`job` = [metrics] job, `source` = the source's name), so a run of one source (`cairn
ingest --source X`) replaces that source's figures and leaves the others'. Pushed with POST, which replaces the
metrics of the same name in the group: `cairn_ingest_last_success_timestamp_seconds` stays at the last run that
did not fail the source, so an alert can fire on its age. A push that fails is a warning in the log, never a
failed run; the URL's credentials never reach the log.

| metric | what |
|---|---|
| `cairn_ingest_documents{outcome}` | seen, indexed, unchanged, skipped, deleted, failed, history_versions |
| `cairn_ingest_embeddings_computed` | texts the model embedded for the source (the embedding cache's misses) |
| `cairn_ingest_seconds` | the source's time in the run |
| `cairn_ingest_source_failed` | 1 when the source failed as a whole, else 0 |
| `cairn_ingest_last_run_timestamp_seconds` | when the run ended (Unix time) |
| `cairn_ingest_last_success_timestamp_seconds` | when a run last ended without failing the source |
"""

from __future__ import annotations

import logging
import time

from cairn.redact import redact
from cairn.schemas.config import MetricsConfig
from cairn.schemas.run_report import RunReport

log = logging.getLogger("cairn.flows.metrics")
OUTCOMES = ("seen", "indexed", "unchanged", "skipped", "deleted", "failed", "history_versions")


def push_run_metrics(config: MetricsConfig, report: RunReport) -> int:
    """Push each source's figures of `report`; the groups pushed."""
    if not config.pushgateway_url:
        return 0
    from prometheus_client import CollectorRegistry, Gauge, pushadd_to_gateway

    pushed, ended = 0, time.time()
    for source, figures in report.per_source.items():
        registry = CollectorRegistry()
        documents = Gauge("cairn_ingest_documents", "documents in the last run", ["outcome"], registry=registry)
        for outcome in OUTCOMES:
            documents.labels(outcome).set(getattr(figures.documents, outcome))
        values = {
            "cairn_ingest_embeddings_computed": ("texts embedded in the run", figures.embeddings_computed),
            "cairn_ingest_seconds": ("the source's seconds in the last run", figures.seconds),
            "cairn_ingest_source_failed": ("1 when the source failed as a whole", int(figures.failed)),
            "cairn_ingest_last_run_timestamp_seconds": ("when the last run ended", ended),
        }
        if not figures.failed:
            values["cairn_ingest_last_success_timestamp_seconds"] = ("when a run last did not fail it", ended)
        for name, (text, value) in values.items():
            Gauge(name, text, registry=registry).set(value)
        try:
            pushadd_to_gateway(
                config.pushgateway_url,
                job=config.job,
                registry=registry,
                grouping_key={"source": source},
                timeout=config.timeout_seconds,
            )
            pushed += 1
        except Exception as exc:  # noqa: BLE001 - refused, unreachable, a bad answer: the run's outcome stands
            log.warning("metrics of source %s not pushed: %s", source, redact(f"{type(exc).__name__}: {exc}"))
    return pushed
