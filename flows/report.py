"""The data-quality report over the collection: what `cairn report` prints, as a Prefect flow for a schedule.

`quality_report` is the shared step (the CLI calls it directly, without a Prefect server); `report_flow`
(`cairn-report`) runs it, publishes the `cairn-quality-report` artifact, and fails the flow run when an
expectation fails (the CLI's exit 1), after the report folder is written.
"""

from __future__ import annotations

from prefect import flow

import cairn.flows  # noqa: F401  (Prefect defaults before Prefect is imported)
from cairn.errors import QualityFailed
from cairn.flows.artifacts import publish_quality
from cairn.index.generations import open_serving
from cairn.index.lock import writer_lock
from cairn.schemas.collection import quote
from cairn.schemas.config import CairnConfig, load_config


def model_dim(config: CairnConfig) -> int:
    from cairn.embedding.model import MODELS

    return MODELS[config.embedding.model].dim


def quality_report(config: CairnConfig, source: str | None = None, tenant: str | None = None, scan: bool = False):
    """Great-expectations over the current rows (of one source and/or tenant), and a report folder. The rows'
    figures come from the derived ledger when it is in step with the collection (index/derived.py), else (or with
    `scan`) from the collection itself, vectors and all."""
    from cairn.index.derived import in_step_ledger
    from cairn.quality import check_figures, check_rows

    if source:
        config.source(source)  # ConfigError naming the known sources
    expr = "is_current == true"
    if source:
        expr += f" and source_name == {quote(source)}"
    if tenant:
        expr += f" and tenant_id == {quote(tenant)}"
    scope = "-".join(filter(None, [source, tenant])) or "all"
    # what the name serves (index/generations.py); NoCollection if nothing
    name, title, dim = f"report-{scope}", f"Cairn data quality: {scope}", model_dim(config)
    with open_serving(config.milvus) as reader, in_step_ledger(config.ledger_folder, reader) as derived:
        if derived is not None and not scan:
            return check_figures(config, derived.figures(source, tenant), dim, name, title)
        return check_rows(config, expr, dim, name, title, reader=reader)


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
        result = quality_report(config, source, tenant, scan)
    publish_quality(result)
    if not result.success:
        failed = "; ".join(f"{r.suite}: {r.column}" for r in result.failed())
        raise QualityFailed(f"data-quality expectations failed ({failed}); report: {result.report_dir}/index.html")
    return result.to_dict()
