"""Reads of parent (section) rows by primary key, every row ACL-checked: the chosen sections (one version per
document), their neighbours for expansion, and the child counts the sparse-document guarantee needs.

Each parent row records its neighbours and its document's child count (schemas/row_links.py ParentLinks), so
these are point reads; rows written before those were recorded are scanned for instead (index/milvus.py).
"""

from __future__ import annotations

from cairn.index.protocol import IndexReader
from cairn.query.packing import newest_per_section
from cairn.query.types import Candidate
from cairn.schemas.row_filter import ACCESS_FIELDS, RowFilter
from cairn.schemas.rows import ChunkRow


def one_version_per_document(rows: list[ChunkRow]) -> set[str]:
    """While a document is being replaced both versions are briefly current; an answer must never mix
    them. Returns the chunk ids to keep: per document, only the rows of its newest version."""
    newest: dict[str, tuple[int, int, str]] = {}
    for row in rows:
        if row.document_id not in newest or row.version > newest[row.document_id]:
            newest[row.document_id] = row.version
    return {r.chunk_id for r in rows if r.version == newest[r.document_id]}


def fetch_parents(reader: IndexReader, chunk_ids: list[str], access: RowFilter) -> dict[str, ChunkRow]:
    """The parent rows by chunk id that `access` admits (the caller keeps one version per document of what it
    returns: one_version_per_document)."""
    # The ACL is checked again on the parents themselves: nothing leaves unchecked.
    return {r.chunk_id: r for r in reader.rows(chunk_ids) if access.admits(r)}


def neighbours(
    reader: IndexReader, seeds: list[ChunkRow], primary: str | None, access: RowFilter
) -> dict[str, list[ChunkRow]]:
    """1-hop adjacency: the previous and next section of each hit (only the primary document's when one
    dominates), same version, ACL-checked. Keyed by the seed's parent chunk id."""
    seeds = [r for r in seeds if primary is None or r.document_id == primary]
    recorded = [r.links.neighbours for r in seeds]
    ids = [chunk_id for linked in recorded if linked is not None for chunk_id in linked]
    found = reader.rows(ids)
    unlinked = [r for r, linked in zip(seeds, recorded) if linked is None]
    if unlinked:
        found += reader.neighbours(unlinked, access)
    rows = newest_per_section([r for r in found if access.admits(r)])
    return {
        seed.chunk_id: [
            r for r in rows if r.document_id == seed.document_id and abs(r.section_order - seed.section_order) == 1
        ]
        for seed in seeds
    }


def enclosing_sections(reader: IndexReader, rows: list[ChunkRow], access: RowFilter) -> dict[str, ChunkRow]:
    """The parent row of each row's enclosing section (`parent_section_id`), by primary key, ACL-checked and of
    the same document version; keyed by the enclosed row's chunk id (rows without one are left out)."""
    wanted = {r.chunk_id: r.section_row_ids(r.parent_section_id) for r in rows if r.parent_section_id}
    found = {r.chunk_id: r for r in reader.rows([i for ids in wanted.values() for i in ids]) if access.admits(r)}
    by_row = {r.chunk_id: r for r in rows}
    out: dict[str, ChunkRow] = {}
    for chunk_id, ids in wanted.items():
        for i in ids:
            parent = found.get(i)
            if parent is not None and parent.version_hash == by_row[chunk_id].version_hash:
                out[chunk_id] = parent
                break
    return out


def children_per_document(
    reader: IndexReader, documents: set[str], dense: list[Candidate], access: RowFilter
) -> dict[str, int]:
    """How many child rows each document has that the caller may read: recorded on the parent rows of the
    document's version (read through a dense candidate's parent), else counted by a scan."""
    parent_of = {c.document_id: c.parent_chunk_id for c in reversed(dense) if c.document_id in documents}
    counts: dict[str, int] = {}
    for row in reader.rows(list(parent_of.values()), ["document_id", "extra", *ACCESS_FIELDS]):
        recorded = row.links.document_child_count
        if recorded is not None:
            counts[row.document_id] = recorded if access.admits(row) else 0
    unrecorded = documents - set(counts)
    return {**counts, **reader.children_per_document(unrecorded, access)} if unrecorded else counts
