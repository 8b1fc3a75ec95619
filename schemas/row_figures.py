"""A row's quality figures: the flat record the data-quality expectations run on (quality/frames.py), computed
from a whole row when it is written, or from a row read back without its vectors. The derived ledger
(index/derived.py) keeps one per row, so a report reads figures, not rows.

Text and vectors are reduced on the spot (to a length, to a width); empty strings in required fields become
nulls: a missing tenant must fail "not null", not pass it as "".
"""

from __future__ import annotations

from typing import Any

from cairn.schemas.collection import DENSE_FIELDS
from cairn.schemas.rows import ChunkRow

# What a row's figures are computed from, vectors aside (a dense field's width is the schema's, which Milvus
# enforces on every write: a row read back has the collection's dim, or it would not have been written).
FIGURE_FIELDS = [
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
]
REQUIRED_STRINGS = ("tenant_id", "version_hash", "source_uri", "document_id", "chunk_id")
_REDUCED = ("text", "extra", "quality_flags", "access_control_list")


def figures(row: ChunkRow, dim: int | None = None) -> dict[str, Any]:
    """The flat record of `row`. Its vectors' widths are measured when the row holds them, else `dim` (the
    collection's) is taken."""
    links, marks = row.links, row.marks
    flags = row.quality_flags or {}
    flat = {k: getattr(row, k) for k in FIGURE_FIELDS if k not in _REDUCED}
    for name in REQUIRED_STRINGS:
        if not flat.get(name):
            flat[name] = None
    flat.update(
        acl_size=len(row.access_control_list or []),
        text_length=len((row.text or "").strip()),
        abstract_token_count=links.abstract_token_count,
        chunk_health_score=flags.get("chunk_health_score"),
        merge_count=flags.get("merge_count"),
        split_count=flags.get("split_count"),
        breadcrumbs=" › ".join(row.breadcrumbs or []),
        whole_document=links.section_count == 1 and row.is_parent,
        stands_alone=marks.stands_alone,
        **{f"{name}_dim": _width(getattr(row, name), dim) for name in DENSE_FIELDS},
    )
    return flat


def _width(vector: list[float] | None, dim: int | None) -> int:
    """A vector's width; a row read without its vectors has the collection's."""
    return dim or 0 if vector is None else len(vector)
