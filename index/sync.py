"""What a run must do to make the collection equal to a source: index, skip, or delete."""
from __future__ import annotations

from dataclasses import dataclass, field

from schemas import DocumentRef


@dataclass
class SyncPlan:
    to_index: list[DocumentRef] = field(default_factory=list)
    unchanged: list[DocumentRef] = field(default_factory=list)
    stale_document_ids: list[str] = field(default_factory=list)


def plan_sync(refs: list[DocumentRef], indexed: dict[str, set[str]], keep_ids: set[str] = frozenset(), cleanup: bool = True) -> SyncPlan:
    """Compare what the source holds with what the index holds for that source.

    A document is unchanged only when the index holds exactly its current version (a leftover
    second version from an interrupted run sends it back through indexing, which removes it).
    Documents the source no longer yields are stale, except those in keep_ids (seen but unreadable
    this run: their last good version stays served).
    """
    plan = SyncPlan()
    current = set()
    for ref in refs:
        current.add(ref.document_id)
        if indexed.get(ref.document_id) == {ref.version_hash}:
            plan.unchanged.append(ref)
        else:
            plan.to_index.append(ref)
    if cleanup:
        plan.stale_document_ids = sorted(set(indexed) - current - set(keep_ids))
    return plan
