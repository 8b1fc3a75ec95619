"""Data-quality checks over what Cairn wrote, with great-expectations, and the reports people read.

from cairn.quality import check_rows
report = check_rows(config, expr)   # a QualityReport; report.report_dir holds index.html & summary.json
"""

from __future__ import annotations

if not __name__.startswith("cairn."):  # the folder is mapped into the cairn namespace (pyproject.toml)
    raise ImportError(f"import cairn.{__name__}, not {__name__}: Cairn installs one top-level package")

from collections.abc import Iterable
from typing import Any

from cairn.schemas.config import CairnConfig


def check_rows(
    config: CairnConfig, expr: str, dim: int, name: str = "report", title: str = "Cairn data quality", reader=None
):
    """Read the rows matching `expr` (current rows only unless the filter says otherwise) and report on them, through
    `reader` (a CollectionReader, or anything with its `iterate`) or else one of the generation the name serves."""
    from cairn.index.generations import open_serving
    from cairn.quality.frames import read_rows
    from cairn.quality.report_folder import write_report

    if reader is None:
        with open_serving(config.milvus) as own:
            frame = read_rows(own, expr)
    else:
        frame = read_rows(reader, expr)
    return write_report(frame, config, dim, name, title)


def check_figures(config: CairnConfig, figures: Iterable[dict[str, Any]], dim: int, name: str, title: str):
    """Report on rows given by their figures (schemas/row_figures.py records, e.g. from the derived ledger)."""
    from cairn.quality.frames import to_frame
    from cairn.quality.report_folder import write_report

    return write_report(to_frame(figures), config, dim, name, title)
