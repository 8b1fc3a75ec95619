"""What the collection holds for one source, read from the collection itself: the only ledger Cairn trusts.

A document version is *complete* when every parent row it promised is present (each parent carries the
number of sections of its version) and every parent has all the children it promised. Writers put children
before parents, so a parent row is only ever visible once its children are; a run killed mid-write leaves a
version that is visibly incomplete here, and the next run re-indexes it. Nothing is kept outside Milvus
that could drift from it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import chain
from typing import Protocol

from cairn.schemas import ChunkType
from cairn.schemas.collection import quote
from cairn.schemas.rows import ChunkRow


class RowReader(Protocol):
    def iterate(self, filter: str, fields: list[str]) -> Iterable[ChunkRow]: ...


@dataclass(slots=True)
class IndexedDocument:
    """The current (is_current) rows of one document, summarised."""

    document_id: str
    versions: set[str] = field(default_factory=set)  # versions among its current rows (parents or children)
    rows: dict[str, str] = field(default_factory=dict)  # chunk_id -> version_hash, every current row (retired by id)
    parents: dict[str, tuple[str, int, int]] = field(default_factory=dict)  # chunk_id -> (version, sections, children)
    children_per_parent: dict[str, int] = field(default_factory=dict)  # parent chunk_id -> child rows present
    orphans: list[str] = field(default_factory=list)  # child chunk_ids whose parent row is missing
    # what its parent rows were written under: the DocumentStamp.key of each (access settings, recipe, origin)
    access: set[str] = field(default_factory=set)

    @property
    def complete_version(self) -> str | None:
        """The one version whose rows are all present, alone; None when anything is off."""
        if self.problems():
            return None
        (version,) = self.versions
        return version

    def superseded(self, version: str) -> list[str]:
        """Rows of every version but `version`: what a write of `version` takes out of service, by id."""
        return sorted(cid for cid, v in self.rows.items() if v != version)

    def leftovers(self, version: str, written: set[str]) -> list[str]:
        """Rows of `version` that a rewrite of it did not produce (a chunker change, a half-written run)."""
        return sorted(cid for cid, v in self.rows.items() if v == version and cid not in written)

    def problems(self) -> list[str]:
        """What keeps the rows from being one complete version; [] when they are."""
        out = []
        if len(self.versions) > 1:
            out.append(f"{len(self.versions)} versions served at once")
        if self.orphans:
            out.append(f"{len(self.orphans)} orphan child rows")
        if not self.parents:
            out.append("no parent rows")
            return out
        promised = {sections for _, sections, _ in self.parents.values()}
        if len(promised) > 1:
            out.append(f"parent rows disagree on the section count ({sorted(promised)})")
        elif len(self.parents) != next(iter(promised)):
            out.append(f"{len(self.parents)} of {next(iter(promised))} parent rows")
        missing = extra = 0
        for chunk_id, (_, _, children) in self.parents.items():
            have = self.children_per_parent.get(chunk_id, 0)
            missing += max(0, children - have)
            extra += max(0, have - children)
        if missing:
            out.append(f"{missing} child rows missing")
        if extra:
            out.append(f"{extra} child rows more than their parents list")
        return out


PARENT_FIELDS = ["chunk_id", "chunk_type", "document_id", "version_hash", "extra"]
CHILD_FIELDS = ["chunk_id", "chunk_type", "document_id", "version_hash", "parent_chunk_id"]


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """What the ledger needs of one current row. A row of the collection (`of`) and a row of the derived ledger
    (index/derived.py) reduce to the same entry, so both are judged by one `read_ledger`."""

    chunk_id: str
    document_id: str
    version: str
    is_parent: bool
    parent_chunk_id: str = ""  # a child's parent
    sections: int = 0  # a parent: the sections its version has
    children: int = 0  # a parent: the children it promised
    access: str = ""  # a parent: what it was written under (DocumentStamp.key: access settings, recipe, origin)
    recipe: str = ""  # a parent: the recipe it was made by (also in `access`; the derived ledger counts it apart)

    @classmethod
    def of(cls, row: ChunkRow) -> LedgerEntry:
        """The entry of a row read with PARENT_FIELDS (a parent) or CHILD_FIELDS (a child), or with both."""
        if not row.is_parent:
            return cls(row.chunk_id, row.document_id, row.version_hash, False, row.parent_chunk_id)
        links, stamp = row.links, row.stamp
        return cls(
            row.chunk_id,
            row.document_id,
            row.version_hash,
            True,
            "",
            links.section_count,
            links.child_count,
            stamp.key,
            stamp.recipe,
        )


def ledger_filters(source_name: str) -> tuple[str, str]:
    """The rows a source's ledger is read from, as two Milvus filters: its current parents, its current children."""
    base = f"source_name == {quote(source_name)} and is_current == true"
    return (
        f"{base} and chunk_type == {quote(ChunkType.FULL_TEXT.value)}",
        f"{base} and chunk_type == {quote(ChunkType.CHILD.value)}",
    )


# One row of a ledger, as read_rows takes it: chunk_id, document_id, version, is_parent, parent_chunk_id (a
# child's), sections, children, access (a parent's stamp key): LedgerEntry's fields, a tuple (the derived ledger
# reads hundreds of thousands of them per run: 345k at 100k pages, where building an object each cost a second).
LedgerRow = tuple[str, str, str, bool, str, int, int, str]


def read_ledger(entries: Iterable[LedgerEntry]) -> dict[str, IndexedDocument]:
    """document_id -> its current rows, for one source, from the entries of its current rows (parents and
    children in any order): from any store (MilvusStore pages them from the collection, or reads the derived
    ledger)."""
    return read_rows(
        (e.chunk_id, e.document_id, e.version, e.is_parent, e.parent_chunk_id, e.sections, e.children, e.access)
        for e in entries
    )


def read_rows(rows: Iterable[LedgerRow]) -> dict[str, IndexedDocument]:
    """read_ledger over rows as tuples (LedgerRow)."""
    docs: dict[str, IndexedDocument] = {}
    children: list[LedgerRow] = []
    for row in rows:
        if not row[3]:
            children.append(row)
            continue
        chunk_id, document_id, version, _, _, sections, promised, access = row
        doc = docs.get(document_id)
        if doc is None:
            doc = docs[document_id] = IndexedDocument(document_id)
        doc.versions.add(version)
        doc.access.add(access)
        doc.rows[chunk_id] = version
        doc.parents[chunk_id] = (version, sections, promised)
    for chunk_id, document_id, version, _, parent, _, _, _ in children:
        doc = docs.get(document_id)
        if doc is None:
            doc = docs[document_id] = IndexedDocument(document_id)
        doc.versions.add(version)
        doc.rows[chunk_id] = version
        if parent in doc.parents:
            doc.children_per_parent[parent] = doc.children_per_parent.get(parent, 0) + 1
        else:
            doc.orphans.append(chunk_id)
    return docs


def collection_ledger(reader: RowReader, source_name: str) -> dict[str, IndexedDocument]:
    """A source's ledger read from the collection: two paged scans, the children's once the parents are read."""
    parents, children = ledger_filters(source_name)
    return read_ledger(
        chain(
            (LedgerEntry.of(row) for row in reader.iterate(parents, PARENT_FIELDS)),
            (LedgerEntry.of(row) for row in reader.iterate(children, CHILD_FIELDS)),
        )
    )
