"""Data-quality checks over what Cairn wrote, with great-expectations, and the reports people read.

from cairn.quality import check_rows, quality_report
report = check_rows(config, expr, dim)   # a QualityReport; report.report_dir holds index.html & summary.json
report = quality_report(config, dim)     # the same over the current rows, as `cairn report` runs it
"""

from __future__ import annotations

if not __name__.startswith("cairn."):  # the folder is mapped into the cairn namespace (pyproject.toml)
    raise ImportError(f"import cairn.{__name__}, not {__name__}: Cairn installs one top-level package")

from cairn.schemas.config import CairnConfig


def check_rows(
    config: CairnConfig, expr: str, dim: int, name: str = "report", title: str = "Cairn data quality", reader=None
):
    """Read the rows matching `expr` (current rows only unless the filter says otherwise) and report on them, through
    `reader` (a CollectionReader, or anything with its `iterate`) or else one of the generation the name serves. The
    report is a full one (its trend, `latest`) when `expr` selects every current row."""
    from cairn.index.generations import open_serving
    from cairn.quality import scope
    from cairn.quality.frames import read_rows
    from cairn.quality.report_folder import write_report

    if reader is None:
        with open_serving(config.milvus) as own:
            frame = read_rows(own, expr)
    else:
        frame = read_rows(reader, expr)
    return write_report(frame, config, dim, name, title, scope.rows(expr))


def quality_report(
    config: CairnConfig, dim: int, source: str | None = None, tenant: str | None = None, scan: bool = False
):
    """Great-expectations over the current rows (of one source and/or tenant), and a report folder; `dim` is the
    configured model's, the width the rows' vectors must have. With a derived ledger in step with the collection
    (index/derived.py), only the rows no one checked under today's expectations are checked now (their figures
    read from it, their outcomes kept there), and the report counts every row's outcome (quality/stored.py);
    else, or with `scan`, every row is read from the collection itself, vectors and all, and checked.
    great-expectations is found warm in the checks server, or warms up there while the rows are read
    (quality/worker.py), and is not imported at all when every row was checked before."""
    from cairn.index.derived import Rows
    from cairn.quality import scope as scopes
    from cairn.quality.frames import served_frame
    from cairn.quality.report_folder import write_report
    from cairn.quality.worker import report_writer
    from cairn.schemas.collection import quote

    if source:
        config.source(source)  # ConfigError naming the known sources
    expr = "is_current == true"
    if source:
        expr += f" and source_name == {quote(source)}"
    if tenant:
        expr += f" and tenant_id == {quote(tenant)}"
    scope = "-".join(filter(None, [source, tenant])) or "all"
    writers = [write_report]
    frame, ledger = served_frame(
        config,
        dim,
        expr,
        None if scan else Rows(source, tenant),
        lambda: writers.append(report_writer(idle_seconds=config.quality.worker_idle_seconds)),
    )
    title = f"Cairn data quality: {scope}"
    return writers[-1](frame, config, dim, f"report-{scope}", title, scopes.of(source, tenant, ledger))
