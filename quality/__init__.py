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
    configured model's, the width the rows' vectors must have. The rows' figures come from the derived ledger when
    it is in step with the collection (index/derived.py), else (or with `scan`) from the collection itself, vectors
    and all. great-expectations warms up in a worker process meanwhile (quality/worker.py)."""
    from cairn.quality import scope as scopes
    from cairn.quality.frames import served_frame
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
    write = report_writer()  # great-expectations warms up meanwhile
    frame = served_frame(config, expr, None if scan else lambda derived: derived.figures(source, tenant))
    return write(frame, config, dim, f"report-{scope}", f"Cairn data quality: {scope}", scopes.of(source, tenant))
