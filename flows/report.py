"""The data-quality report over the collection: what `cairn report` prints, as a Prefect flow for a schedule.

`cairn.quality.quality_report` is the shared step (the CLI calls it directly, without Prefect); `report_flow`
(`cairn-report`) runs it, publishes the `cairn-quality-report` artifact, and fails the flow run when an
expectation fails (the CLI's exit 1), after the report folder is written.
"""

from __future__ import annotations

from prefect import flow

import cairn.flows  # noqa: F401  (Prefect defaults before Prefect is imported)
from cairn.embedding import encoder_for
from cairn.errors import QualityFailed
from cairn.flows.artifacts import publish_quality
from cairn.index.lock import writer_lock
from cairn.quality import quality_report
from cairn.schemas.config import load_config


@flow(name="cairn-report")
def report_flow(
    config_path: str | None = None,
    source: str | None = None,
    tenant: str | None = None,
    wait_seconds: float = 0.0,
    scan: bool = False,
) -> dict:
    """Data-quality checks over the collection (or one source or tenant), as `cairn report` runs them.

    On a Milvus Lite file the run queues up to `wait_seconds` behind an ingest holding the index (Lite
    allows one process); on a Milvus server it reads alongside."""
    config = load_config(config_path)
    with writer_lock(config.milvus, wait_seconds):
        result = quality_report(config, encoder_for(config.embedding).dim, source, tenant, scan)
    publish_quality(result)
    if not result.success:
        failed = "; ".join(f"{r.suite}: {r.column}" for r in result.failed())
        raise QualityFailed(f"data-quality expectations failed ({failed}); report: {result.report_dir}/index.html")
    return result.to_dict()
