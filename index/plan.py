"""What the collection holds for a source against what the source yields: the one comparison that both an
ingest (what to index, skip and remove) and `cairn reconcile` (what has drifted) are made of."""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass, field

from cairn.index.ledger import IndexedDocument
from cairn.schemas import DocumentRef
from cairn.schemas.row_links import stamp_parts


@dataclass
class SyncPlan:
    unchanged: list[DocumentRef] = field(default_factory=list)  # exactly their current version, complete
    missing: list[DocumentRef] = field(default_factory=list)  # not in the collection at all
    outdated: list[DocumentRef] = field(default_factory=list)  # complete, but another version than the source's
    incomplete: dict[str, list[str]] = field(default_factory=dict)  # document_id -> what is wrong with its rows
    forced: list[DocumentRef] = field(default_factory=list)  # unchanged, re-processed on purpose (backfill)
    skipped: list[DocumentRef] = field(default_factory=list)  # not in the collection: nothing to index at this version
    to_index: list[DocumentRef] = field(default_factory=list)  # everything above but unchanged, in source order
    stale_document_ids: list[str] = field(default_factory=list)  # indexed, no longer yielded by the source
    why: dict[str, int] = field(default_factory=dict)  # of `outdated`: how many for each reason (OUTDATED_WHY)


@dataclass(frozen=True)
class Expected:
    """What a document's verdict depends on besides its rows: what it must have been written under (the key of its
    rows' DocumentStamp: the fingerprints of the access settings and of the recipe, and the source's origin; None:
    any), and the versions earlier runs found nothing to index in, by document id."""

    stamp: str | None = None  # DocumentStamp.key: access settings, recipe (schemas/recipe.py), origin
    skipped: Mapping[str, str] = field(default_factory=dict)


def plan_sync(
    refs: list[DocumentRef],
    ledger: dict[str, IndexedDocument],
    keep_ids: Set[str] = frozenset(),
    cleanup: bool = True,
    force: set[str] | None = None,
    expected: Expected = Expected(),
) -> SyncPlan:
    """Compare what the source holds with what the collection holds for that source.

    A document is unchanged only when the collection holds exactly its current version, completely
    (a second version, a missing row or an orphan left by an interrupted run sends it back through
    indexing, which rewrites the same ids and removes the rest). Documents the source no longer yields
    are stale, except those in keep_ids (seen but unreadable this run: their last good version stays
    served) and unless `cleanup` is off. `force` names documents to re-process even when unchanged.
    `expected.stamp` is what the source's documents are written under (schemas/row_links.py DocumentStamp.key): the
    fingerprint of its access settings (tenant, acl, acl_ceiling, access rules), of its recipe (schemas/recipe.py)
    and its origin; a document written under another is outdated, so a permission change or a new recipe takes
    effect at the next run.
    `expected.skipped` maps the documents an earlier run found nothing to index in to the version it read
    (index/outcomes.py): one the collection lacks, still at that version, is skipped again without being read
    (unless forced).
    """
    plan = SyncPlan()
    yielded: set[str] = set()
    for ref in refs:
        yielded.add(ref.document_id)
        indexed = ledger.get(ref.document_id)
        forced = bool(force and ref.document_id in force)
        skipped_at = None if forced else expected.skipped.get(ref.document_id)
        found = verdict(ref, indexed, expected, skipped_at)
        if found == "skipped":
            plan.skipped.append(ref)
            continue
        if found == "missing":
            plan.missing.append(ref)
        elif indexed is not None and found == "incomplete":
            plan.incomplete[ref.document_id] = indexed.problems()
        elif found == "outdated" and indexed is not None:
            plan.outdated.append(ref)
            reason = outdated_why(ref, indexed, expected)
            plan.why[reason] = plan.why.get(reason, 0) + 1
        elif forced:
            plan.forced.append(ref)
        else:
            plan.unchanged.append(ref)
            continue
        plan.to_index.append(ref)
    if cleanup:
        plan.stale_document_ids = sorted(set(ledger) - yielded - set(keep_ids))
    return plan


def verdict(
    ref: DocumentRef, indexed: IndexedDocument | None, expected: Expected, skipped_at: str | None = None
) -> str | None:
    """Why the collection does not hold exactly this version of the document, complete ("missing",
    "incomplete", "outdated"), "skipped" when it holds none of it and an earlier run found nothing to index in
    this version (`skipped_at`: the version it read), or None when it does: plan_sync's rule for one document."""
    if indexed is None:
        return "skipped" if skipped_at is not None and skipped_at == ref.version_hash else "missing"
    if indexed.problems():
        return "incomplete"
    stamp = expected.stamp
    if indexed.complete_version != ref.version_hash or (stamp is not None and indexed.access != {stamp}):
        return "outdated"
    return None


# Why an outdated document is indexed again, as the run report counts it.
OUTDATED_WHY = {
    "version": "a new version",
    "access": "access settings changed",
    "recipe": "recipe changed",
    "origin": "its source recorded",  # rows of before rows recorded which source wrote them
}


def outdated_why(ref: DocumentRef, indexed: IndexedDocument, expected: Expected) -> str:
    """Which of OUTDATED_WHY's reasons sends a complete document back through indexing (the first that holds)."""
    if indexed.complete_version != ref.version_hash or expected.stamp is None:
        return OUTDATED_WHY["version"]
    access, recipe, _ = stamp_parts(expected.stamp)
    had = [stamp_parts(key) for key in indexed.access]
    if any(parts[0] != access for parts in had):
        return OUTDATED_WHY["access"]
    if any(parts[1] != recipe for parts in had):
        return OUTDATED_WHY["recipe"]
    return OUTDATED_WHY["origin"]
