"""What a row's JSON `extra` records besides the source's own metadata, as typed records: the one place its
keys are named.

Each field's name is its key in `extra`. `to_row()` is what the row builder puts in `extra` (index/rows.py);
`from_row(row)` reads it back from a ChunkRow (which has each as a property: `row.links`, `row.pages`...) or a
scanned row, a field the row lacks (a row written before that key existed, a child row read for a parent's field)
taking its default. Readers (the ledger, the retriever, the quality frames) use
these records, never the keys.

    extra = dict(doc.extra, **DocumentStamp.of(doc).to_row(), **section.extra, **links.to_row())
    row.links.section_count  # schemas/rows.py ChunkRow
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from functools import cache
from types import UnionType
from typing import TYPE_CHECKING, Any, Generic, Self, TypeAlias, TypeVar, cast, get_args, get_origin, get_type_hints

from cairn.schemas.records import SourceDocument

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from cairn.schemas.rows import ChunkRow

RowLike: TypeAlias = "ChunkRow | Mapping[str, Any]"  # a typed row, or a row as pymilvus reads it (scans, the ledger)


class RowLink:
    """A record of a row's `extra`: read back from a row (`from_row`), written with only what is set (`to_row`;
    a record whose unset values must still be written says so in its own)."""

    def to_row(self) -> dict[str, Any]:
        return {name: value for name, value in asdict(cast("DataclassInstance", self)).items() if value}

    @classmethod
    def from_row(cls, row: RowLike) -> Self:
        extra = (row.get("extra") if isinstance(row, Mapping) else row.extra) or {}
        record: type = cls  # a class, hashable: _fields_of's cache key
        return cls(**{name: _as(kind, extra[name]) for name, kind in _fields_of(record) if name in extra})


Link = TypeVar("Link", bound=RowLink)


class LinkOf(Generic[Link]):
    """A row's record of one kind, read from its `extra` when asked: `row.links`, `row.pages`... (schemas/rows.py
    ChunkRow declares each once, `links = LinkOf(ParentLinks)`)."""

    def __init__(self, kind: type[Link]) -> None:
        self.kind = kind

    def __get__(self, row: Any, owner: Any = None) -> Link:
        return self.kind.from_row(row)


@dataclass(frozen=True)
class DocumentStamp(RowLink):
    """On every row of a document: the access settings and the recipe it was written under, and the source's
    caveats."""

    # In the order rows have always held them: a source's warnings among its metadata, then the access stamp.
    warnings: list[str] = field(default_factory=list)  # e.g. a PDF's pages without a text layer
    access: str = ""  # flows/discovery.py access_fingerprint; "" on a row written before rows recorded it
    recipe: str = ""  # schemas/recipe.py recipe_fingerprint; "" on a row written before rows recorded it
    origin: str = ""  # flows/discovery.py source_origin: which source of that name wrote it; "" before recorded

    @classmethod
    def of(cls, doc: SourceDocument) -> DocumentStamp:
        return cls(warnings=list(doc.warnings), access=doc.access, recipe=doc.recipe, origin=doc.origin)

    @property
    def key(self) -> str:
        """What a document's rows were written under, as one string (the ledger keeps and compares this, so an
        unchanged run compares one value per document, as before the recipe and origin were recorded)."""
        return stamp_key(self.access, self.recipe, self.origin)


def stamp_key(access: str, recipe: str, origin: str) -> str:
    """DocumentStamp.key of these parts."""
    return f"{access}\x1f{recipe}\x1f{origin}"


def stamp_parts(key: str) -> tuple[str, str, str]:
    """(access, recipe, origin) of a DocumentStamp.key ("" each for a key of before they were recorded)."""
    access, recipe, origin = (key.split("\x1f") + ["", ""])[:3]
    return access, recipe, origin


@dataclass(frozen=True)
class ParentLinks(RowLink):
    """On a parent (full_text) row: its section's abstract and child count, and what it records about the whole
    document version so readers fetch by primary key instead of scanning (index/milvus.py): the number of
    sections (what the ledger checks completeness against), of child rows, and the parent ids of the sections
    just before and after it. A parent row always has every key; the defaults are what a reader takes from a
    row that lacks one."""

    abstract: str = ""
    abstract_token_count: int | None = None  # None: a child row, which has no abstract of its own
    child_count: int = -1  # -1: unknown, so the ledger sees the version as incomplete
    section_count: int = -1
    document_child_count: int | None = None  # None: written before it was recorded, count the children instead
    previous_section: str | None = None  # "" for the first section; None: written before neighbours were recorded
    next_section: str | None = None  # "" for the last section

    def to_row(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def neighbours(self) -> list[str] | None:
        """The parent ids of the sections just before and after (those that exist); None when not recorded."""
        if self.previous_section is None:
            return None
        return [chunk_id for chunk_id in (self.previous_section, self.next_section) if chunk_id]


@dataclass(frozen=True)
class ChildMarks(RowLink):
    """On a child row of a legal section: why it is a child of its own however short it is."""

    defined_term: str = ""  # the term a definition chunk defines
    own_child: bool = False  # an agreement's opening statement

    @property
    def stands_alone(self) -> bool:
        """A child of its own however short (no size band holds it), not a piece of the prose around it."""
        return bool(self.defined_term) or self.own_child


@dataclass(frozen=True)
class PageRange(RowLink):
    """On the rows of a paged document's section (a PDF's): the pages it spans (chunkers/sections.py)."""

    page_start: int | None = None
    page_end: int | None = None

    def to_row(self) -> dict[str, Any]:
        return {} if self.page_start is None else asdict(self)

    @property
    def label(self) -> str:
        """ "p. 3", "pp. 3-5", or "" for a document without pages."""
        if self.page_start is None:
            return ""
        if self.page_end in (None, self.page_start):
            return f"p. {self.page_start}"
        return f"pp. {self.page_start}-{self.page_end}"


@dataclass(frozen=True)
class SectionPlace(RowLink):
    """Where a section is published, for a link that clicks through (query/citations.py deep_link): its heading's
    anchor as the site renders it (chunkers/sections.py; absent before the first heading, and on rows written
    before anchors were recorded), and the page's published address with the site's anchor style (sources/wiki.py:
    the source's link_template or the page's front matter `url`)."""

    anchor: str | None = None
    link: str | None = None
    anchor_style: str = "github"


@dataclass(frozen=True)
class AgreementCard(RowLink):
    """On every row of an agreement: what the source read from its opening statement (sources/pdf.py), which a
    child of its own carries into its text (index/rows.py document_card)."""

    parties: list[str] = field(default_factory=list)
    effective_date: str = ""  # ISO date


@cache
def _fields_of(cls: type) -> tuple[tuple[str, Any], ...]:
    """(name, type) of each field of a record class, resolved once: get_type_hints per row was 7% of reading
    a collection's rows (a full quality scan)."""
    hints = get_type_hints(cls)
    return tuple((f.name, hints[f.name]) for f in fields(cls))


def _as(kind: Any, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(kind, UnionType):  # `int | None`: the type that is not None
        kind = next(arg for arg in get_args(kind) if arg is not type(None))
    if get_origin(kind) is list:
        return [str(item) for item in value]
    return kind(value)
