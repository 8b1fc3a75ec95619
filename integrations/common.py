"""What both adapters share: the scope every question is asked in (fixed when the adapter is made), one Retriever
asked at a time, and a hit's metadata. Imports no framework."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from cairn.query import Hit, Principal, RetrievalResult, Retriever
from cairn.query.filters import AsOf, Filters, as_epoch, search_filter
from cairn.schemas.config import CairnConfig

# A Retriever is not made for concurrent threads: a generation switch reassigns its reader and encoder one after
# the other, a failed read closes the reader under any other query, and its cache evicts without a lock. Both
# frameworks run async calls (and batches) in threads, so calls through adapters take the lock of their Retriever,
# one per Retriever, shared by every adapter over it (a service may make one adapter per caller).
_LOCKS: weakref.WeakKeyDictionary[Retriever, threading.Lock] = weakref.WeakKeyDictionary()
_LOCKS_LOCK = threading.Lock()

Source = Retriever | CairnConfig | str | Path
A = TypeVar("A", bound="OwnsRetriever")


def needs_extra(missing: ModuleNotFoundError, package: str, requirement: str, extra: str) -> None:
    """An adapter's framework import failed: when the framework itself (`package`) is missing, an ImportError
    saying which extra brings it; else nothing (something the framework needs is missing: the caller re-raises,
    its own error says what)."""
    if (missing.name or "").split(".")[0] == package:
        raise ImportError(f'cairn.integrations.{extra} needs {requirement}: pip install "cairn[{extra}]"') from missing


@dataclass(frozen=True)
class Scope:
    """Who asks and within what: every question through an adapter is asked with these, never with anything the
    question says."""

    principal: Principal
    k: int | None = None
    doc_tag: str | None = None
    as_of: AsOf = None
    filters: Filters | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.principal, Principal):
            raise TypeError("an adapter needs a Principal(tenant, groups)")
        # what retrieve() would refuse (a bad as_of, filter field or value), refused now, not at the first question
        search_filter(self.principal, as_epoch(self.as_of), self.doc_tag, self.filters)


def open_retriever(source: Source) -> tuple[Retriever, bool]:
    """The Retriever to ask, and whether the adapter opened it (and so closes it): a Retriever handed in stays its
    owner's to close."""
    if isinstance(source, Retriever):
        return source, False
    return Retriever.from_config(source), True


class OwnsRetriever:
    """What both adapters do with their Retriever: `close()` (and `with`) closes it only when `from_config`
    opened it; one handed in stays its owner's. A subclass sets `retriever`, and `_owned` False by default."""

    if TYPE_CHECKING:  # declared for the checker only: each framework's model declares them its own way
        retriever: Retriever
        _owned: bool

    def close(self) -> None:
        if self._owned:
            self.retriever.close()

    def __enter__(self: A) -> A:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def adapter_over(source: Source, make: Callable[[Retriever], A]) -> A:
    """`make(retriever)` over the Retriever `source` names (opened from a config, or handed in), closing one it
    opened when `make` refuses its arguments; the adapter then owns what it opened."""
    retriever, owned = open_retriever(source)
    try:
        made = make(retriever)
    except Exception:
        if owned:
            retriever.close()
        raise
    made._owned = owned
    return made


def ask(retriever: Retriever, question: str, scope: Scope) -> RetrievalResult:
    with _LOCKS_LOCK:
        lock = _LOCKS.setdefault(retriever, threading.Lock())
    with lock:
        return retriever.retrieve(question, scope.principal, scope.k, scope.doc_tag, scope.as_of, scope.filters)


def empty_metadata(result: RetrievalResult) -> dict[str, Any] | None:
    """For a result without hits, what an adapter returns in their place (#53: a framework that gets `[]` cannot
    tell a vague question from an index without the answer): the metadata of one item whose text is the
    result's message, rank 0, no citation; None when there are hits."""
    if result.hits:
        return None
    return {
        "rank": 0,
        "status": result.status,
        "empty_reason": result.empty_reason,
        "message": result.message,
        "confidence": result.confidence,
        "confidence_reason": result.confidence_reason,
    }


def hit_metadata(hit: Hit, rank: int, result: RetrievalResult) -> dict[str, Any]:
    """A hit as an adapter's metadata: what `cairn query --json` gives a result (citation, scores, flags, ids,
    title, links...) but its text, which is the document's content; its rank (1 = best); and the answer's
    confidence and status. A status other than "ok" comes with no hits: an adapter returns the reason instead
    (empty_metadata), or an empty list when made with `explain_empty=False`."""
    data = hit.to_dict()
    del data["text"]
    return {
        **data,
        "rank": rank,
        "confidence": result.confidence,
        "confidence_reason": result.confidence_reason,
        "status": result.status,
    }
