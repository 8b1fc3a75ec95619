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
load() of such a ref returns a document with is_current False and its temporal bounds set.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Iterator, Protocol

from cairn.errors import DocumentError, SourceError  # noqa: F401  (sources.base names them for connectors)
from cairn.schemas import DocumentRef, SourceDocument


@dataclass(frozen=True)
class DiscoveryFailure:
    """An input seen but unreadable; its document_id keeps its indexed rows from being cleaned up."""

    locator: str
    document_id: str
    reason: str


class Source(Protocol):
    name: str
    complete: bool  # discover() lists every document the source holds

    def discover(self) -> Iterator[DocumentRef | DiscoveryFailure]:
        """Every document the source holds now, cheaply (no parsing): enough to skip unchanged ones."""

    def load(self, ref: DocumentRef) -> SourceDocument:
        """The document behind a ref; raises DocumentError naming the input on bad content."""


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
