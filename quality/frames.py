"""Rows of the collection, or their figures kept by the derived ledger -> pandas frames the expectations run on
(one row per Milvus row; schemas/row_figures.py says what a row's figures are).

Vectors are read page by page and reduced to their width on the spot, so checking a large collection costs
memory for the metadata only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from cairn.index.reader import CollectionReader
from cairn.schemas.collection import DENSE_FIELDS
from cairn.schemas.row_figures import FIGURE_FIELDS, figures

if TYPE_CHECKING:
    from cairn.index.derived import Rows
    from cairn.schemas.config import CairnConfig

FIELDS = [*FIGURE_FIELDS, *DENSE_FIELDS]


def served_frame(
    config: CairnConfig, dim: int, expr: str, rows: Rows | None, reading: Callable[[], None] = lambda: None
) -> tuple[pd.DataFrame, tuple[Path, Rows] | None]:
    """The frame of the rows to check in what the collection's name serves (NoCollection if nothing), and where
    their outcomes are kept. With `rows` and a derived ledger in step with the collection: the figures of those of
    `rows` that no one checked under today's expectations (quality/stored.py), and (the ledger's file, `rows`),
    for write_report to keep their outcomes there and count every row of `rows`. Else, or without `rows`: every
    row `expr` selects, read from the collection itself (read_rows), and None. `dim`: the model's; `reading` is
    called before any row is read (when there are some to check: what starts great-expectations' import)."""
    from cairn.index.derived import Rows, in_step_ledger
    from cairn.index.generations import open_serving
    from cairn.quality.stored import unchecked_documents

    with open_serving(config.milvus) as reader, in_step_ledger(config.ledger_folder, reader) as derived:
        if derived is None or rows is None:
            reading()
            return read_rows(reader, expr), None
        stale = unchecked_documents(derived, rows, config, dim)
        if stale:
            reading()
        figures = derived.figures(Rows(rows.source, rows.tenant, stale), stamped=True) if stale else ()
        return to_frame(figures), (derived.path, rows)


def read_rows(reader: CollectionReader, expr: str) -> pd.DataFrame:
    """The frame of the rows matching `expr`, read from the collection, vectors and all (a full scan)."""
    return to_frame(figures(row) for row in reader.iterate(expr, FIELDS, batch_size=500))


def to_frame(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """The frame of these figures, with what is judged across rows: each child's parent present, and the
    children exempt from the child band."""
    frame = pd.DataFrame(list(records))
    if frame.empty:
        return pd.DataFrame(columns=[*FIELDS, "acl_size", "text_length"])
    parents = set(frame.loc[frame["chunk_type"] == "full_text", "chunk_id"])
    frame["parent_exists"] = frame["parent_chunk_id"].isin(parents) | (frame["chunk_type"] == "full_text")
    # Children are cut at natural boundaries, so a stretch of text rarely divides evenly: one child per
    # stretch may hold the remainder and sit under the band by design (chunkers/children.py). That one
    # (the stretch's smallest child) is exempt from the child band; it must still hold text. A stretch is
    # a section, or in a legal section the prose between two definitions; a definition is a child of its
    # own however short it is (chunkers/legal.py), so it is exempt too, as is an agreement's opening
    # statement, which is made a child of its own for the same reason (schemas/row_links.py ChildMarks).
    definition = frame["stands_alone"].astype(bool)
    prose = frame[(frame["chunk_type"] == "child") & ~definition].copy()
    remainders: set = set()
    if len(prose):
        ordered = frame[frame["chunk_type"] == "child"].sort_values(["parent_chunk_id", "chunk_order"])
        stretch = ordered["stands_alone"].astype(bool).groupby(ordered["parent_chunk_id"]).cumsum()
        prose["stretch"] = stretch.reindex(prose.index)
        smallest = prose.groupby(["parent_chunk_id", "stretch"])["token_count"].idxmin()
        remainders = set(prose.loc[smallest, "chunk_id"])
    frame["is_remainder"] = frame["chunk_id"].isin(remainders) | definition
    return frame
