"""What a run must do to make the collection equal to a source: index, skip, or remove."""
from __future__ import annotations

from dataclasses import dataclass, field

from cairn.index.ledger import IndexedDocument
from cairn.schemas import DocumentRef


@dataclass
class SyncPlan:
    to_index: list[DocumentRef] = field(default_factory=list)
    unchanged: list[DocumentRef] = field(default_factory=list)
    stale_document_ids: list[str] = field(default_factory=list)


def plan_sync(
    refs: list[DocumentRef],
    ledger: dict[str, IndexedDocument],
    keep_ids: set[str] = frozenset(),
    cleanup: bool = True,
    force: set[str] | None = None,
) -> SyncPlan:
    """Compare what the source holds with what the collection holds for that source.

    A document is unchanged only when the collection holds exactly its current version, completely
    (a second version, a missing row or an orphan left by an interrupted run sends it back through
    indexing, which rewrites the same ids and removes the rest). Documents the source no longer yields
    are stale, except those in keep_ids (seen but unreadable this run: their last good version stays
    served). `force` names documents to re-process even when unchanged (backfills).
    """
    plan = SyncPlan()
    current = set()
    for ref in refs:
        current.add(ref.document_id)
        indexed = ledger.get(ref.document_id)
        up_to_date = indexed is not None and indexed.complete_version == ref.version_hash
        if up_to_date and not (force and ref.document_id in force):
            plan.unchanged.append(ref)
        else:
            plan.to_index.append(ref)
    if cleanup:
        plan.stale_document_ids = sorted(set(ledger) - current - set(keep_ids))
    return plan
