"""Rows of the collection -> pandas frames the expectations run on (one row per Milvus row).

Vectors are read page by page and reduced to their length on the spot, so checking a large collection
costs memory for the metadata only. Empty strings in required fields become nulls: a missing tenant
must fail "not null", not pass it as "".
"""

from __future__ import annotations

import pandas as pd

from cairn.index.milvus import CollectionReader
from cairn.schemas.collection import DENSE_FIELDS
from cairn.schemas.row_links import ChildMarks, ParentLinks

FIELDS = [
    "chunk_id",
    "document_id",
    "section_id",
    "parent_chunk_id",
    "chunk_type",
    "chunk_order",
    "token_count",
    "tenant_id",
    "access_control_list",
    "version_hash",
    "temporal_start",
    "temporal_end",
    "source_uri",
    "source_name",
    "source_type",
    "content_type",
    "environment",
    "severity",
    "text",
    "breadcrumbs",
    "locator",
    "quality_flags",
    "extra",
    *DENSE_FIELDS,
]
REQUIRED_STRINGS = ("tenant_id", "version_hash", "source_uri", "document_id", "chunk_id")


def flatten(row: dict) -> dict:
    links, marks = ParentLinks.from_row(row), ChildMarks.from_row(row)
    flags = row.get("quality_flags") or {}
    flat = {
        k: row.get(k)
        for k in FIELDS
        if k not in ("text", "extra", "quality_flags", "access_control_list", *DENSE_FIELDS)
    }
    for name in REQUIRED_STRINGS:
        if not flat.get(name):
            flat[name] = None
    flat.update(
        acl_size=len(row.get("access_control_list") or []),
        text_length=len((row.get("text") or "").strip()),
        abstract_token_count=links.abstract_token_count,
        chunk_health_score=flags.get("chunk_health_score"),
        merge_count=flags.get("merge_count"),
        split_count=flags.get("split_count"),
        breadcrumbs=" › ".join(row.get("breadcrumbs") or []),
        whole_document=links.section_count == 1 and row.get("chunk_type") == "full_text",
        stands_alone=marks.stands_alone,
        **{f"{name}_dim": len(row.get(name) or []) for name in DENSE_FIELDS},
    )
    return flat


def read_rows(reader: CollectionReader, expr: str) -> pd.DataFrame:
    frame = pd.DataFrame([flatten(row) for row in reader.iterate(expr, FIELDS, batch_size=500)])
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
