"""Discovery and the plan: what a source holds now against what the collection holds for it. The first step of
every sync (flows/sync.py), and all of the no-op check (flows/noop.py), so it imports nothing heavy."""

from __future__ import annotations

import json
import threading
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
from cairn.redact import redact
from cairn.schemas import DocumentRef, stable_id
from cairn.schemas.config import CairnConfig
from cairn.schemas.recipe import recipe_fingerprint
from cairn.schemas.row_links import stamp_key
from cairn.schemas.run_report import SourceReport
from cairn.schemas.source_config import SourceConfig
from cairn.sources import DiscoveryFailure, Source, open_source

WATCH_GRACE_SECONDS = 0.5  # past the budget, the listing's own check gets this long to say so first


@dataclass
class Discovery:
    refs: list[DocumentRef]
    failures: list[DiscoveryFailure]
    complete: bool = True  # False: listing stopped early (`Discoverer.until`); never a ground for removing anything


class Discoverer:
    """The discover step: what a source lists now (each document's id and version), and what it could not read."""

    name: ClassVar[str] = "discover"
    retried: ClassVar[bool] = False
    in_flow: ClassVar[bool] = False

    def run(self, source: Source) -> Discovery:
        return self.until(source, lambda ref: False)

    def until(self, source: Source, stop: Callable[[DocumentRef], bool]) -> Discovery:
        """The listing up to and including the first document `stop` picks (then not `complete`), else all of it.

        It runs in a thread of its own, watched: a listing still running when the source's listing budget is
        spent fails the source then, even one stuck inside a single request or file system call that nothing
        else bounds (a server answering a byte at a time, a hung network mount). The thread is abandoned, a
        daemon that never holds up the process's exit; the listing's own checks stop it at its next document."""
        refs: list[DocumentRef] = []
        failures: list[DiscoveryFailure] = []
        outcome: list[Discovery | BaseException] = []
        finished = threading.Event()

        def listing() -> None:
            try:
                for item in source.discover():
                    source.check_listing(len(refs) + len(failures))
                    if isinstance(item, DiscoveryFailure):
                        failures.append(item)
                        continue
                    refs.append(item)
                    if stop(item):
                        outcome.append(Discovery(refs, failures, complete=False))
                        return
                source.check_listing(len(refs) + len(failures))
                outcome.append(Discovery(refs, failures))
            except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
                outcome.append(exc)
            finally:
                finished.set()

        threading.Thread(target=listing, name=f"cairn-listing-{source.name}", daemon=True).start()
        if not finished.wait(max(source.budget_left(), 0.0) + WATCH_GRACE_SECONDS):
            listed = len(refs) + len(failures)
            source.check_budget(f"listing ({listed:,} documents listed, the listing itself not answering)")
        if not outcome:  # the budget was not spent after all (a clock that moved back): wait for the listing
            finished.wait()
        result = outcome[0]
        if isinstance(result, BaseException):
            raise result
        return result


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
        for reason, count in self.plan.why.items():
            report.reindexed[reason] = report.reindexed.get(reason, 0) + count
        for failure in self.found.failures:
            report.fail(name, failure.locator, failure.reason)
        for ref in self.plan.skipped:
            report.skip(name, ref.locator, self.skipped[ref.document_id].reason, read=False)


def access_fingerprint(source_config: SourceConfig) -> str:
    """What a document's readers depend on besides its own content: the source's tenant and access settings.
    Rows record it; when it changes, every document of the source is rewritten (nothing is re-embedded)."""
    settings = source_config.model_dump(mode="json", include={"tenant", "acl", "acl_ceiling", "access"})
    return stable_id(json.dumps(settings, sort_keys=True), length=16)


def source_origin(source_config: SourceConfig) -> str:
    """Which source of its name a source is: its type, where it reads (folder, URI, repository, API; any
    credentials in a URL left out) and its tenant. Rows record it: a run of a source whose name rows of another
    origin hold is refused (flows/sync.py), so two configurations sharing an index never remove each other's."""
    root = next(
        (
            str(value)
            for key in ("repository", "api_url", "uri", "path")
            if (value := getattr(source_config, key, None))
        ),
        "",
    )
    return f"{source_config.type} {redact(root)} (tenant {source_config.tenant})"


@dataclass
class Listed:
    """A source opened with the cursor its ledger allows and listed: what a plan is made from."""

    source: Source
    found: Discovery
    access: str  # the source's access fingerprint (what its documents are written under)
    relisted: bool  # the cursor was ignored: the whole source listed
    skipped: dict[str, Outcome]  # what earlier runs found nothing to index in (index/outcomes.py), by id
    stamp: str = ""  # what its documents are written under: access settings, recipe, origin (DocumentStamp.key)

    @property
    def expected(self) -> Expected:
        return Expected(self.stamp, {doc: outcome.version for doc, outcome in self.skipped.items()})


def list_source(
    source_config: SourceConfig,
    config: CairnConfig,
    ledger: dict[str, IndexedDocument],
    state: SourceState,
    options: RunOptions,
    discover: Callable[[Source], Discovery] | None = None,
) -> Listed:
    """Discover the source (raising SourceError when it is unusable), narrowed by its cursor when `ledger` (what
    the collection holds for it) allows. `discover` is a run's discover step, which lists everything; without
    one (the no-op check, flows/noop.py) the listing stops at the first document to index. A folder source reads
    only the files whose stat moved since the last discovery (the version memo kept in `state`). Takes no writer
    slot: a listing may take long, and writes nothing of the index."""
    backfill = options.backfill
    cleanup = options.cleanup or source_config.cleanup
    access = access_fingerprint(source_config)
    stamp = stamp_key(access, recipe_fingerprint(source_config, config.chunking), source_origin(source_config))
    expected = Expected(stamp)
    # A full listing ignores the cursor: a cleanup "full" or a backfill (absence then means removal), and a run
    # after the access settings or the recipe changed (every document must be rewritten, not only those changed
    # since).
    relist = cleanup == "full" or backfill is not None or any(doc.access != {stamp} for doc in ledger.values())
    # The version memo only spares reading unchanged files; it never decides what is listed, so a relist keeps it.
    memo = state.versions(source_config.name)
    skipped = state.outcomes(source_config.name).skipped()
    skipped_at = {doc: outcome.version for doc, outcome in skipped.items()}
    cursor = {} if relist else state.get(source_config.name, documents=len(ledger))
    source = open_source(source_config, cursor, s3=config.s3, memo=memo)
    if discover is None:
        found = Discoverer().until(
            source,
            lambda ref: (
                verdict(ref, ledger.get(ref.document_id), expected, skipped_at.get(ref.document_id))
                not in (None, "skipped")
            ),
        )
    else:
        found = discover(source)
    if found.complete:
        memo.save()  # one transaction, once the source has listed everything (a failed discovery saves nothing)
    failpoint("discovered")
    return Listed(source, found, access, relist, skipped, stamp)


def plan_listed(
    listed: Listed, ledger: dict[str, IndexedDocument], source_config: SourceConfig, options: RunOptions
) -> Planned:
    """The plan of a listed source against `ledger`, read (by a run) in the turn with the writer slot that writes
    it. A listing cut short (the no-op check) removes nothing."""
    cleanup = options.cleanup or source_config.cleanup
    found, source = listed.found, listed.source
    plan = plan_sync(
        found.refs,
        ledger,
        keep_ids={f.document_id for f in found.failures},
        cleanup=found.complete and (cleanup == "full" or (cleanup == "incremental" and source.complete)),
        force={r.document_id for r in found.refs} if options.backfill is not None else None,
        expected=listed.expected,
    )
    return Planned(source, found, ledger, plan, listed.skipped)


def plan_source(
    source_config: SourceConfig,
    config: CairnConfig,
    store: IndexStore,
    state: SourceState,
    options: RunOptions,
    discover: Callable[[Source], Discovery] | None = None,
) -> Planned:
    """`list_source` against the store's ledger, then `plan_listed`: for a caller that holds the writer slot
    throughout, or writes nothing."""
    ledger = store.ledger(source_config.name)
    listed = list_source(source_config, config, ledger, state, options, discover)
    return plan_listed(listed, ledger, source_config, options)


def same_rows(before: dict[str, IndexedDocument], now: dict[str, IndexedDocument]) -> bool:
    """Whether two reads of a source's ledger hold the same current rows: no run wrote the source in between."""
    return before.keys() == now.keys() and all(before[d].rows == now[d].rows for d in before)
