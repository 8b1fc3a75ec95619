"""The records every layer shares: what a source yields, what a chunker cuts, who is asking.

Times are UTC epoch seconds (int) so that they filter cheaply inside Milvus; TEMPORAL_OPEN marks a
validity interval with no end yet.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import Any, Self

TEMPORAL_OPEN = 253402300799  # 9999-12-31T23:59:59Z: "still valid"
EPOCH_FIRST = -62135596800  # 0001-01-01T00:00:00Z: the first instant a datetime holds (years 1-9999 are the range)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Between two pages of a paged document's content (a PDF): sources join pages with it, chunkers number them by it.
PAGE_BREAK = "\f"


class _ValueEnum(str, Enum):  # noqa: UP042 - StrEnum would print a member as its value, not as Type.NAME
    """A string enum whose parse error lists the allowed values."""

    @classmethod
    def parse(cls, value: str | None, default: Self | None = None) -> Self:
        if value is None or value == "":
            if default is None:
                raise ValueError(f"{cls.__name__} is required; allowed: {', '.join(m.value for m in cls)}")
            return default
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            allowed = ", ".join(m.value for m in cls)
            raise ValueError(f"{value!r} is not a valid {cls.__name__}; allowed: {allowed}") from None


class SourceType(_ValueEnum):
    WIKI = "wiki"
    GIT = "git"
    PAGERDUTY = "pagerduty"
    PDF = "pdf"


class ContentType(_ValueEnum):
    RUNBOOK = "runbook"
    POSTMORTEM = "postmortem"
    DOCUMENT = "document"  # Markdown that declares nothing more specific
    README = "readme"
    TERRAFORM = "terraform"
    YAML = "yaml"
    CODE = "code"
    INCIDENT = "incident"
    AGREEMENT = "agreement"


class ChunkType(_ValueEnum):
    FULL_TEXT = "full_text"  # a parent section: fetched by id for generation context
    CHILD = "child"  # a child chunk: what similarity search hits


class Environment(_ValueEnum):
    PRODUCTION = "production"
    STAGING = "staging"
    DEVELOPMENT = "development"
    UNSPECIFIED = "unspecified"


class Severity(_ValueEnum):
    SEV1 = "sev1"
    SEV2 = "sev2"
    SEV3 = "sev3"
    SEV4 = "sev4"
    SEV5 = "sev5"
    UNSPECIFIED = "unspecified"


def stable_id(*parts: str, length: int = 32) -> str:
    """A deterministic id from its parts (never random: re-runs must rewrite the same rows)."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
    return digest[:length]


def to_epoch(value: datetime | None) -> int | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return int(value.timestamp())


def parse_day(value: str | None) -> int | None:
    """ISO date or date-time (UTC unless it says otherwise) -> epoch seconds; None for None or "". ValueError
    for anything else, and for an instant outside years 1-9999 in UTC (`0001-01-01T00:00:00+14:00` is in year 0)."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{value!r} is not an ISO date (YYYY-MM-DD or YYYY-MM-DDTHH:MM)") from None
    epoch = to_epoch(parsed)
    assert epoch is not None
    if not in_years(epoch):
        raise ValueError(f"{value!r} is outside the years 1 to 9999 (UTC)")
    return epoch


def in_years(epoch: int) -> bool:
    """Whether epoch seconds fall in the years 1 to 9999 (UTC): what a date can say and a datetime can hold."""
    return EPOCH_FIRST <= epoch <= TEMPORAL_OPEN


def from_epoch(value: int | None) -> datetime | None:
    """Epoch seconds -> an aware UTC datetime; None for None and for "still valid" (TEMPORAL_OPEN or later).
    Total: an instant before year 1 is year 1's first (a row or a caller's value can hold any Int64)."""
    if value is None or value >= TEMPORAL_OPEN:
        return None
    return _EPOCH + timedelta(seconds=max(value, EPOCH_FIRST))


@dataclass(frozen=True)
class DocumentRef:
    """What discovery knows about a document before reading it: enough to skip it when unchanged."""

    source_name: str
    locator: str  # path relative to the source root, object key, incident id...
    document_id: str
    version_hash: str


@dataclass
class SourceDocument:
    document_id: str
    source_name: str
    source_type: SourceType
    source_uri: str
    locator: str
    title: str
    content: str
    tenant_id: str
    access_control_list: list[str]
    content_type: ContentType
    version_hash: str
    created_at: int
    updated_at: int
    temporal_start: int
    temporal_end: int = TEMPORAL_OPEN
    service_name: str = ""
    environment: Environment = Environment.UNSPECIFIED
    severity: Severity = Severity.UNSPECIFIED
    tags: list[str] = field(default_factory=list)
    doc_tag: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # source-specific metadata (commit, pages, parties...)
    is_current: bool = True  # False for a past version written by a history backfill
    # the fingerprint of the access settings its rows are written under (flows/discovery.py), set by the sync
    access: str = ""
    # the fingerprint of what made its rows (schemas/recipe.py: settings, parser and chunker versions), set by the sync
    recipe: str = ""
    # the identity of the source that wrote it (flows/discovery.py source_origin: type, root, tenant), set by the sync
    origin: str = ""
    warnings: list[str] = field(default_factory=list)  # caveats on a document it could index (a PDF's scanned pages)


@dataclass
class QualityFlags:
    merge_count: int = 0  # heading sections folded into this one (0 = none)
    split_count: int = 0  # pieces its heading section was cut into (0 = not split)
    chunk_health_score: float = 1.0

    def as_dict(self) -> dict[str, int | float]:
        return {
            "merge_count": self.merge_count,
            "split_count": self.split_count,
            "chunk_health_score": round(self.chunk_health_score, 4),
        }


@dataclass
class Chunk:
    """A child chunk (~100-200 tokens) inside a section."""

    order: int
    text: str
    token_count: int
    term: str = ""  # the term a definition chunk defines (legal layout)
    alone: bool = False  # a block made a child of its own (an agreement's opening statement), however short


@dataclass
class Section:
    """A parent section (target 400-900 tokens) with its abstract and child chunks."""

    section_id: str  # stable heading path, e.g. "auth-gateway.restart.step-2"
    breadcrumbs: list[str]
    section_level: int
    section_order: int
    parent_section_id: str
    text: str
    token_count: int
    abstract: str
    abstract_token_count: int
    chunks: list[Chunk]
    quality_flags: QualityFlags = field(default_factory=QualityFlags)
    extra: dict[str, Any] = field(default_factory=dict)  # layout-specific (page range, defined term...)


@dataclass(frozen=True)
class Principal:
    """Who is asking: a tenant and the groups they belong to. Every query requires one."""

    tenant: str
    groups: tuple[str, ...]

    def __init__(self, tenant: str, groups: str | Iterable[str]) -> None:
        if not isinstance(tenant, str) or not tenant.strip():
            raise ValueError("Principal needs a non-empty tenant")
        if isinstance(groups, str):
            groups = (groups,)
        cleaned = tuple(sorted({str(g) for g in groups if str(g).strip()}))
        if not cleaned:
            raise ValueError("Principal needs at least one group (default deny: no group sees nothing)")
        object.__setattr__(self, "tenant", tenant)
        object.__setattr__(self, "groups", cleaned)
