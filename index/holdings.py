"""What the index holds per source, in the one vocabulary every command counts in (docs/guarantees.md, "Counts"):

- documents: those with a current version (what queries answer from);
- history versions: superseded versions kept with `keep_history` (what `--as-of` answers from);
- rows by kind: current parent (`full_text`) and `child` rows; history rows apart;
- rows on an older recipe: current rows made by another recipe than the configuration's (schemas/recipe.py),
  which the next ingest re-chunks;
- configured or not: a source with rows that the configuration no longer names still answers queries until
  `cairn drop --source NAME` removes it.

Read from the derived ledger when it is in step (index/derived.py), else from one scan of the collection.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from cairn.index.derived import DerivedLedger
from cairn.index.reader import CollectionReader
from cairn.schemas import ChunkType
from cairn.schemas.collection import quote

# (source, tenant, chunk_type, is_current, recipe, rows, distinct document versions): DerivedLedger.tally's shape
Tally = tuple[str, str, str, bool, str, int, int]


@dataclass
class SourceHolding:
    source: str
    configured: bool
    tenants: list[str] = field(default_factory=list)
    documents: int = 0  # with a current version
    history_versions: int = 0  # superseded versions kept (keep_history)
    rows: dict[str, int] = field(default_factory=dict)  # current rows by chunk_type
    history_rows: int = 0
    older_recipe_rows: int = 0  # current rows another recipe made (0 for a source no longer configured)

    @property
    def current_rows(self) -> int:
        return sum(self.rows.values())

    def to_dict(self) -> dict[str, Any]:
        return dict(asdict(self), current_rows=self.current_rows)


def holdings(tally: Iterable[Tally], recipes: Mapping[str, str]) -> list[SourceHolding]:
    """Each source with rows, by name, from a tally; `recipes`: each configured source's recipe fingerprint."""
    found: dict[str, SourceHolding] = {}
    tenants: dict[str, set[str]] = {}
    for source, tenant, kind, current, recipe, rows, versions in tally:
        held = found.get(source)
        if held is None:
            held = found[source] = SourceHolding(source, source in recipes)
        tenants.setdefault(source, set()).add(tenant)
        if not current:
            held.history_rows += rows
            if kind == ChunkType.FULL_TEXT.value:
                held.history_versions += versions
            continue
        held.rows[kind] = held.rows.get(kind, 0) + rows
        if kind == ChunkType.FULL_TEXT.value:
            held.documents += versions
        if source in recipes and recipe != recipes[source]:
            held.older_recipe_rows += rows
    for source, held in found.items():
        held.tenants = sorted(tenants[source])
    return [found[name] for name in sorted(found)]


SCAN_FIELDS = ["source_name", "tenant_id", "chunk_type", "is_current", "document_id", "version_hash", "extra"]


def scan_tally(reader: CollectionReader) -> list[Tally]:
    """DerivedLedger.tally from one pass over the collection's rows (no vector, no text)."""
    rows: dict[tuple[str, str, str, bool, str], int] = {}
    versions: dict[tuple[str, str, str, bool, str], set[tuple[str, str]]] = {}
    for row in reader.iterate("", SCAN_FIELDS):
        key = (
            row.source_name,
            row.tenant_id,
            row.chunk_type,
            bool(row.is_current),
            row.stamp.recipe,
        )
        rows[key] = rows.get(key, 0) + 1
        versions.setdefault(key, set()).add((row.document_id, row.version_hash))
    return [(*key, n, len(versions[key])) for key, n in rows.items()]


def read_holdings(
    reader: CollectionReader, derived: DerivedLedger | None, recipes: Mapping[str, str]
) -> list[SourceHolding]:
    """What the collection holds per source: from `derived` when given (in step), else a scan."""
    return holdings(derived.tally() if derived is not None else scan_tally(reader), recipes)


@dataclass
class DocumentHolding:
    """One version of a document the collection holds (`cairn documents`)."""

    source: str
    tenant: str
    document: str  # document_id
    locator: str
    version: str
    updated: int  # updated_at, epoch seconds
    rows: int  # its parent and child rows
    recipe: str  # "current", "older" (the next ingest re-chunks it) or "" (its source is not configured)
    current: bool  # False: a history version (keep_history)

    def to_dict(self) -> dict[str, Any]:
        return dict(asdict(self), state="current" if self.current else "history")


DOCUMENT_FIELDS = [
    "source_name",
    "tenant_id",
    "document_id",
    "locator",
    "version_hash",
    "updated_at",
    "is_current",
    "extra",
]


def list_documents(
    reader: CollectionReader, recipes: Mapping[str, str], source: str | None = None, tenant: str | None = None
) -> list[DocumentHolding]:
    """Every document version the collection holds (of `source`, of `tenant`), read from its parent rows only:
    each records its version's section and child counts (schemas/row_links.py ParentLinks)."""
    conditions = [f"chunk_type == {quote(ChunkType.FULL_TEXT.value)}"]
    conditions += [
        f"{name} == {quote(value)}" for name, value in (("source_name", source), ("tenant_id", tenant)) if value
    ]
    found: dict[tuple[str, str, bool], DocumentHolding] = {}
    for row in reader.iterate(" and ".join(conditions), DOCUMENT_FIELDS):
        key = (row.document_id, row.version_hash, bool(row.is_current))
        held = found.get(key)
        if held is None:
            name, made_by = row.source_name, row.stamp.recipe
            recipe = "" if name not in recipes else "current" if made_by == recipes[name] else "older"
            links = row.links
            children = links.document_child_count if links.document_child_count is not None else 0
            held = found[key] = DocumentHolding(
                name, row.tenant_id, key[0], row.locator, key[1], int(row.updated_at), children, recipe, key[2]
            )
        held.rows += 1
    return sorted(found.values(), key=lambda d: (d.source, d.locator, not d.current, -d.updated))
