"""What every connector is: a discoverer of DocumentRefs and a loader of SourceDocuments."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Protocol

from schemas import DocumentRef, SourceDocument


class DocumentError(Exception):
    """One input cannot be read; the run reports it and goes on with the rest."""

    def __init__(self, locator: str, reason: str) -> None:
        super().__init__(f"{locator}: {reason}")
        self.locator = locator
        self.reason = reason


class SourceError(Exception):
    """The whole source is unusable (missing folder, bad credentials); the message says what to fix."""


@dataclass(frozen=True)
class DiscoveryFailure:
    """An input seen but unreadable; its document_id keeps its indexed rows from being cleaned up."""

    locator: str
    document_id: str
    reason: str


class Source(Protocol):
    name: str

    def discover(self) -> Iterator[DocumentRef | DiscoveryFailure]:
        """Every document the source holds now, cheaply (no parsing): enough to skip unchanged ones."""

    def load(self, ref: DocumentRef) -> SourceDocument:
        """The document behind a ref; raises DocumentError naming the input on bad content."""
