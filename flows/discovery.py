"""Discovery and the plan: what a source holds now against what the collection holds for it. The first step of
every sync (flows/sync.py), and all of the no-op check (flows/noop.py), so it imports nothing heavy."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from cairn.flows.failpoints import failpoint
from cairn.flows.options import RunOptions
from cairn.index.ledger import IndexedDocument
from cairn.index.outcomes import Outcome
from cairn.index.plan import Expected, SyncPlan, plan_sync, verdict
from cairn.index.protocol import IndexStore
from cairn.index.state import SourceState
from cairn.schemas import DocumentRef, stable_id
from cairn.schemas.config import S3Config
from cairn.schemas.run_report import SourceReport
from cairn.schemas.source_config import SourceConfig
from cairn.sources import DiscoveryFailure, Source, open_source


@dataclass
class Discovery:
    refs: list[DocumentRef]
    failures: list[DiscoveryFailure]
    complete: bool = True  # False: listing stopped early (`Discoverer.until`); never a ground for removing anything


class Discoverer:
    """The discover step: what a source lists now (each document's id and version), and what it could not read."""

    name: ClassVar[str] = "discover"
    retried: ClassVar[bool] = False

    def run(self, source: Source) -> Discovery:
        return self.until(source, lambda ref: False)

    def until(self, source: Source, stop: Callable[[DocumentRef], bool]) -> Discovery:
        """The listing up to and including the first document `stop` picks (then not `complete`), else all of it."""
        refs: list[DocumentRef] = []
        failures: list[DiscoveryFailure] = []
        for item in source.discover():
            source.check_budget(f"listing ({len(refs) + len(failures)} documents listed)")
            if isinstance(item, DiscoveryFailure):
                failures.append(item)
                continue
            refs.append(item)
            if stop(item):
                return Discovery(refs, failures, complete=False)
        return Discovery(refs, failures)


@dataclass
class Planned:
    """A source discovered and compared with the collection: what a sync (or a check) is about to do."""

    source: Source
    found: Discovery
    ledger: dict[str, IndexedDocument]
    plan: SyncPlan
    skipped: dict[str, Outcome]  # what earlier runs found nothing to index in (index/outcomes.py), by id

    @property
    def has_work(self) -> bool:
        return bool(self.plan.to_index or self.plan.stale_document_ids)

    def account(self, report: SourceReport, name: str) -> None:
        """What discovery and the plan already tell: documents seen, unchanged, unreadable, skipped again."""
        report.documents.seen += len(self.found.refs) + len(self.found.failures)
        report.documents.unchanged += len(self.plan.unchanged)
        for ref in self.plan.skipped:
            report.skip(name, ref.locator, self.skipped[ref.document_id].reason, read=False)
        for failure in self.found.failures:
            report.fail(name, failure.locator, failure.reason)


def access_fingerprint(source_config: SourceConfig) -> str:
    """What a document's readers depend on besides its own content: the source's tenant and access settings.
    Rows record it; when it changes, every document of the source is rewritten (nothing is re-embedded)."""
    settings = source_config.model_dump(mode="json", include={"tenant", "acl", "acl_ceiling", "access"})
    return stable_id(json.dumps(settings, sort_keys=True), length=16)


def plan_source(
    source_config: SourceConfig,
    s3: S3Config,
    store: IndexStore,
    state: SourceState,
    options: RunOptions,
    discover: Callable[[Source], Discovery] | None = None,
) -> Planned:
    """Discover the source (raising SourceError when it is unusable) and plan against the collection. `discover`
    is a run's discover step, which lists everything; without one (the no-op check, flows/noop.py) the listing
    stops at the first document to index, and that plan has work and removes nothing. A folder source reads only
    the files whose stat moved since the last discovery (the version memo kept in `state`)."""
    backfill = options.backfill
    cleanup = options.cleanup or source_config.cleanup
    access = access_fingerprint(source_config)
    ledger = store.ledger(source_config.name)
    # A full listing ignores the cursor: a cleanup "full" or a backfill (absence then means removal), and a
    # run after the access settings changed (every document must be rewritten, not only those changed since).
    relist = cleanup == "full" or backfill is not None or any(doc.access != {access} for doc in ledger.values())
    # The version memo only spares reading unchanged files; it never decides what is listed, so a relist keeps it.
    memo = state.versions(source_config.name)
    skipped = state.outcomes(source_config.name).skipped()
    cursor = {} if relist else state.get(source_config.name, documents=len(ledger))
    source = open_source(source_config, cursor, s3=s3, memo=memo)
    skipped_at = {doc: outcome.version for doc, outcome in skipped.items()}
    if discover is None:
        found = Discoverer().until(
            source,
            lambda ref: (
                verdict(ref, ledger.get(ref.document_id), access, skipped_at.get(ref.document_id))
                not in (None, "skipped")
            ),
        )
    else:
        found = discover(source)
    if found.complete:
        memo.save()  # one transaction, once the source has listed everything (a failed discovery saves nothing)
    failpoint("discovered")
    plan = plan_sync(
        found.refs,
        ledger,
        keep_ids={f.document_id for f in found.failures},
        cleanup=found.complete and (cleanup == "full" or (cleanup == "incremental" and source.complete)),
        force={r.document_id for r in found.refs} if backfill is not None else None,
        expected=Expected(access, skipped_at),
    )
    return Planned(source, found, ledger, plan, skipped)
