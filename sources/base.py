"""What every connector is: a discoverer of DocumentRefs and a loader of SourceDocuments.

A connector is built by `sources.open_source(config, cursor)` where `cursor` is the dict it saved after
its last successful run (empty on the first). The flow calls, in order:

    discover()  -> every DocumentRef (cheap: no parsing) or DiscoveryFailure
    load(ref)   -> the SourceDocument behind a ref (raises DocumentError naming the input)
    cursor()    -> optional: the dict to save once the run's writes landed (high-water mark, commit id)

`complete` says whether discover() lists every document the source holds. A source that discovers only
what changed since its cursor (PagerDuty since a high-water mark) sets it False, and cleanup of
documents it did not yield is skipped for that run.

`history(since, until, limit)` is optional: past versions (refs with their own version_hash) valid at
some time in the window, or written by the last `limit` changes (commits), for a history backfill;
load() of such a ref returns a document with is_current False and its temporal bounds set. So is
`recent_history(depth)`: the past versions an ordinary run of a keep_history source adds (those the changes
since its cursor replaced; with no cursor, those the last `depth` changes replaced).

Every connector is a `Connector`: it holds the source's config and the mark its cursor saved, names its
documents with `document_id` (one rule for every source type), and builds its SourceDocuments with `document()`,
which fills what comes from the source (id, name, type, tenant and ACL) around what the connector read.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Generic, NamedTuple, Protocol, TypeVar

# sources.base names them for connectors too
from cairn.errors import DocumentError, DocumentRefused, NothingToIndex, SourceError  # noqa: F401
from cairn.schemas import DocumentRef, SourceDocument, SourceType, stable_id
from cairn.schemas.source_config import SourceBase

ConfigT = TypeVar("ConfigT", bound=SourceBase)  # the config model of one source type


@dataclass(frozen=True)
class DiscoveryFailure:
    """An input seen but unreadable; its document_id keeps its indexed rows from being cleaned up."""

    locator: str
    document_id: str
    reason: str


class Source(Protocol):
    name: str
    complete: bool  # discover() lists every document the source holds

    def check_budget(self, doing: str) -> None:
        """SourceError when the source has listed past its budget (`doing`: how far it got)."""

    def check_listing(self, listed: int) -> None:
        """SourceError when the listing, `listed` documents so far, is past the source's time budget or its
        max_documents."""

    def budget_left(self) -> float:
        """Seconds left of the source's listing budget (0 or less: spent)."""

    def discover(self) -> Iterator[DocumentRef | DiscoveryFailure]:
        """Every document the source holds now, cheaply (no parsing): enough to skip unchanged ones."""

    def load(self, ref: DocumentRef) -> SourceDocument:
        """The document behind a ref; raises DocumentError naming the input on bad content."""


class FileStat(NamedTuple):
    """How a file stood when it was listed. ctime_ns is in it because a tool can set mtime back, never ctime."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int


class VersionMemo(Protocol):
    """What a folder source remembers between runs: each file's version as of its FileStat, so that a file whose
    stat did not move is not read again. It only spares reading; it never decides what is listed."""

    def get(self, locator: str, stat: FileStat) -> str | None:
        """The version remembered for `locator` when it was seen with this very stat, else None."""

    def put(self, locator: str, stat: FileStat, version: str) -> None:
        """Remember the version read from `locator` as listed with `stat`."""


class NoMemo:
    """The default: nothing remembered, every file read."""

    def get(self, locator: str, stat: FileStat) -> str | None:
        return None

    def put(self, locator: str, stat: FileStat, version: str) -> None:
        return None


def source_cursor(source: Source) -> dict | None:
    """The cursor a source wants saved after a successful run, if it keeps one."""
    method = getattr(source, "cursor", None)
    return method() if callable(method) else None


def source_history(
    source: Source, since: datetime | None, until: datetime | None, limit: int | None = None
) -> Iterator[DocumentRef] | None:
    """Past versions for a history backfill, or None when the source keeps no history."""
    method = getattr(source, "history", None)
    return method(since, until, limit) if callable(method) else None


def source_recent_history(source: Source, depth: int) -> Iterator[DocumentRef] | None:
    """keep_history's past versions for an ordinary run (those the commits since the last run replaced; on a
    first run, those of the last `depth` commits), or None when the source keeps no history."""
    method = getattr(source, "recent_history", None)
    return method(depth) if callable(method) else None


def document_id(source_type: SourceType, source_name: str, locator: str) -> str:
    """A document's id: the same for the same source and locator on every run and release (a new rule would
    re-index every document of every user)."""
    return stable_id(source_type.value, source_name, locator)


@dataclass(frozen=True)
class Grant:
    """Who may read a document: its tenant and a non-empty ACL (default deny: see Connector.granted)."""

    tenant: str
    acl: list[str]


class Connector(Generic[ConfigT]):
    """What every connector has: its source's config and name, the mark it resumes from, its documents' ids, and
    the SourceDocument fields that come from the source, not from what it read.

    A subclass names its config model (`Connector[GitSourceConfig]`), its `kind` and what to do when a document
    is left with no ACL (`no_acl_advice`). One that resumes where its last successful run stopped names the
    `cursor_key` it saves its mark under, and gives the mark to save in `next_mark()`; the mark it was given is
    `resumed_mark` (None on a first run)."""

    kind: ClassVar[SourceType]
    no_acl_advice: ClassVar[str] = "declare a default acl on the source"
    cursor_key: ClassVar[str] = ""  # "": the connector keeps no cursor
    complete = True

    def __init__(self, config: ConfigT, cursor: dict | None = None) -> None:
        self.name = config.name
        self.config = config
        self.resumed_mark: str | None = (cursor or {}).get(self.cursor_key) if self.cursor_key else None
        self.deadline = time.monotonic() + config.listing_budget_seconds  # opened when its sync begins

    def check_budget(self, doing: str) -> None:
        """SourceError once the source has listed for longer than its `listing_budget_seconds` (checked between
        documents listed and by the discover step's watch, flows/discovery.py)."""
        if time.monotonic() > self.deadline:
            raise SourceError(
                f"source {self.name!r} ran past its listing budget ({self.config.listing_budget_seconds:g} s, "
                f"listing_budget_seconds) while {doing}: nothing was indexed or removed for it this run"
            )

    def check_listing(self, listed: int) -> None:
        """SourceError once the listing, `listed` documents so far, is past the time budget or max_documents
        (checked as documents arrive, and by a store as it pages: before it holds them all)."""
        self.check_budget(f"listing ({listed:,} documents listed)")
        if listed > self.config.max_documents:
            raise SourceError(
                f"source {self.name!r} listed more than its max_documents ({self.config.max_documents:,}): nothing "
                "was indexed or removed for it this run; raise max_documents if the source really holds that many, "
                "or narrow it"
            )

    def budget_left(self) -> float:
        return self.deadline - time.monotonic()

    def cursor(self) -> dict | None:
        """The cursor to save once the run's writes landed (None: nothing to save)."""
        mark = self.next_mark() if self.cursor_key else None
        return None if mark is None else {self.cursor_key: mark}

    def next_mark(self) -> str | None:
        """Where the next run resumes: a connector that keeps a cursor says."""
        return None

    def document_id(self, locator: str) -> str:
        return document_id(self.kind, self.name, locator)

    def document_ref(self, locator: str, version_hash: str) -> DocumentRef:
        return DocumentRef(self.name, locator, self.document_id(locator), version_hash)

    def failure(self, locator: str, reason: str) -> DiscoveryFailure:
        return DiscoveryFailure(locator, self.document_id(locator), reason)

    def granted(self, locator: str, tenant: str, acl: list[str]) -> Grant:
        """The tenant and ACL a document gets; DocumentRefused when the ACL is empty (no ACL, no row)."""
        if not acl:
            raise DocumentRefused(locator, f"no access control list: {self.no_acl_advice}")
        return Grant(tenant, list(acl))

    def document(self, locator: str, version_hash: str, grant: Grant, **read: Any) -> SourceDocument:
        """The SourceDocument of `locator` at `version_hash`: `read` holds the other SourceDocument fields (title,
        content, source_uri, content_type, times, labels, extra), as the connector read them."""
        return SourceDocument(
            document_id=self.document_id(locator),
            source_name=self.name,
            source_type=self.kind,
            locator=locator,
            version_hash=version_hash,
            tenant_id=grant.tenant,
            access_control_list=grant.acl,
            **read,
        )
