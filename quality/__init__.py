"""Data-quality checks over what Cairn wrote, with great-expectations, and the reports people read.

    from cairn.quality import check_rows
    report = check_rows(config, expr)   # a QualityReport; report.report_dir holds index.html & summary.json
"""
from __future__ import annotations

if not __name__.startswith("cairn."):  # the folder is mapped into the cairn namespace (pyproject.toml)
    raise ImportError(f"import cairn.{__name__}, not {__name__}: Cairn installs one top-level package")

from cairn.schemas.config import CairnConfig


def check_rows(config: CairnConfig, expr: str, dim: int, name: str = "report", title: str = "Cairn data quality", store=None):
    """Read the rows matching `expr` (current rows only unless the filter says otherwise) and report on them."""
    from cairn.index.store import MilvusStore
    from cairn.quality.frames import read_rows
    from cairn.quality.report import write_report

    own = store is None
    store = store or MilvusStore(config.milvus, dim)
    try:
        store.load()
        frame = read_rows(store, expr)
    finally:
        if own:
            store.close()
    return write_report(frame, config, dim, name, title)
