"""One row of the collection as a typed record: `ChunkRow`, a parent section (chunk_type "full_text") or a child
chunk. Every layer that writes or reads rows takes and returns it; the dict pymilvus speaks exists only at the
store's edge (`to_row` on the way in, `from_row` on the way out).

    row = ChunkRow.from_row(milvus_dict)        # a read carries the fields it asked for; the others keep defaults
    row.links.section_count, row.pages, row.version
    row.to_row()                                 # what an upsert sends

Also the one place two formulas live: a row's id (`row_id`, from the document, its version key and the section)
and the order of two versions of one document (`ChunkRow.version`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from cairn.schemas.records import TEMPORAL_OPEN, ChunkType, stable_id
from cairn.schemas.row_links import (
    AgreementCard,
    ChildMarks,
    DocumentStamp,
    LinkOf,
    PageRange,
    ParentLinks,
    SectionPlace,
)


def version_key(version_hash: str, is_current: bool, temporal_start: int) -> str:
    """What row ids are derived from besides the section: the version, and for a past version written by a
    history backfill also when it began (a file reverted to old content must not overwrite the current rows with
    history ones). A current version that is later superseded keeps its ids."""
    return version_hash if is_current else f"{version_hash}@{int(temporal_start)}"


def version_order(updated_at: int, temporal_start: int, version_hash: str) -> tuple[int, int, str]:
    """What orders two versions of one document (rule 15): updated_at, then when it became valid, then the hash."""
    return int(updated_at or 0), int(temporal_start or 0), version_hash


def row_id(document_id: str, key: str, section_id: str, order: int | None = None) -> str:
    """A parent row's id (order None) or its child's (the child's order in the section): deterministic, so a
    re-run rewrites the same rows."""
    if order is None:
        return stable_id(document_id, key, section_id)
    return stable_id(document_id, key, section_id, str(order))


@dataclass(slots=True)
class ChunkRow:
    """A row of the one collection (schemas/collection.py builds its schema from the same fields). A row read back
    carries the fields the read asked for; the others keep these defaults. Vectors are None unless written or
    asked for."""

    chunk_id: str = ""
    document_id: str = ""
    section_id: str = ""
    parent_section_id: str = ""
    parent_chunk_id: str = ""  # a child's parent row; "" on a parent
    chunk_type: str = ChunkType.CHILD.value
    content_type: str = ""
    source_type: str = ""
    source_name: str = ""
    service_name: str = ""
    environment: str = ""
    tenant_id: str = ""
    acl_key: str = ""
    version_hash: str = ""
    severity: str = ""
    title: str = ""
    source_uri: str = ""
    doc_tag: str = ""
    locator: str = ""
    token_count: int = 0
    section_level: int = 0
    section_order: int = 0
    chunk_order: int = -1  # -1 on a parent
    temporal_start: int = 0
    temporal_end: int = TEMPORAL_OPEN
    created_at: int = 0
    updated_at: int = 0
    is_current: bool = True
    breadcrumbs: list[str] = field(default_factory=list)
    access_control_list: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    quality_flags: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # the source's metadata and the records of row_links.py
    text: str = ""
    search_text: str = ""  # what BM25 ranks: context header + text
    abstract_embedding: list[float] | None = None
    full_text_embedding: list[float] | None = None

    # ---- the dict pymilvus speaks --------------------------------------------------------------------------
    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> ChunkRow:
        """A row as pymilvus returns it (a query or get: the fields asked for; a search hit: its `entity` with the
        primary key as `id`)."""
        entity = row.get("entity")
        if entity is not None:
            row = {"chunk_id": row.get("chunk_id") or row.get("id"), **entity}
        made = cls(**{name: row[name] for name in _NAMES if name in row})
        if made.breadcrumbs.__class__ is not list:  # pymilvus hands arrays back as its own sequence type
            made.breadcrumbs = list(made.breadcrumbs)
        if made.access_control_list.__class__ is not list:
            made.access_control_list = list(made.access_control_list)
        if made.tags.__class__ is not list:
            made.tags = list(made.tags)
        return made

    def to_row(self) -> dict[str, Any]:
        """Every field, for an upsert (a row built to be written has both vectors)."""
        return {name: getattr(self, name) for name in _NAMES}

    # ---- what a row says ------------------------------------------------------------------------------------
    @property
    def is_parent(self) -> bool:
        return self.chunk_type == ChunkType.FULL_TEXT.value

    @property
    def version(self) -> tuple[int, int, str]:
        return version_order(self.updated_at, self.temporal_start, self.version_hash)

    def section_row_ids(self, section_id: str) -> list[str]:
        """The ids the parent row of `section_id` (another section of this row's document version) may have: the
        version key being the hash for a version written current and hash@temporal_start for one written as
        history by a backfill (the row does not say which it was written as)."""
        return [
            row_id(self.document_id, version_key(self.version_hash, True, self.temporal_start), section_id),
            row_id(self.document_id, version_key(self.version_hash, False, self.temporal_start), section_id),
        ]

    # What its `extra` records besides the source's metadata, typed (schemas/row_links.py), read when asked.
    links = LinkOf(ParentLinks)
    marks = LinkOf(ChildMarks)
    stamp = LinkOf(DocumentStamp)
    pages = LinkOf(PageRange)
    place = LinkOf(SectionPlace)
    card = LinkOf(AgreementCard)


_NAMES = tuple(f.name for f in fields(ChunkRow))


@dataclass(slots=True)
class ScoredRow:
    """A search hit: the row (the fields the search asked for) and the engine's score (a COSINE leg's cosine,
    the BM25 leg's score as the engine reports it)."""

    row: ChunkRow
    score: float
