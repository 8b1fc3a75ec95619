"""Data-quality checks over what Cairn wrote, with great-expectations, and the reports people read.

from cairn.quality import check_rows
report = check_rows(config, expr)   # a QualityReport; report.report_dir holds index.html & summary.json
"""

from __future__ import annotations

if not __name__.startswith("cairn."):  # the folder is mapped into the cairn namespace (pyproject.toml)
    raise ImportError(f"import cairn.{__name__}, not {__name__}: Cairn installs one top-level package")

from cairn.schemas.config import CairnConfig


def check_rows(
    config: CairnConfig,
    expr: str,
    dim: int,
    name: str = "report",
    title: str = "Cairn data quality",
    reader=None,
    figures=None,
):
    """Report on the rows matching `expr` (current rows only unless the filter says otherwise): their figures as
    `figures` gives them (an iterable of schemas/row_figures.py records, e.g. from the derived ledger), else read
    from the collection through `reader` (a CollectionReader, or anything with its `iterate`) or else one of the
    generation the name serves."""
    from cairn.index.generations import open_serving
    from cairn.quality.frames import read_rows, to_frame
    from cairn.quality.report_folder import write_report

    if figures is not None:
        frame = to_frame(figures)
    elif reader is None:
        with open_serving(config.milvus) as own:
            frame = read_rows(own, expr)
    else:
        frame = read_rows(reader, expr)
    return write_report(frame, config, dim, name, title)
