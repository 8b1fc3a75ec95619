"""One source brought in line with the collection: discover, plan, index the batches, retire what is gone,
save the cursor. What is indexed is read from the collection itself at the start (index/ledger.py), so a run
killed anywhere is repaired by the next: incomplete or doubled documents are re-indexed under the same
deterministic ids, leftovers removed.

The writer slot is held twice per source, never while it lists: to read its ledger (bringing the derived ledger
in step may rewrite it), then, once it is listed, to read the ledger again (unless the collection's mark says
nothing was written meanwhile), plan and write. When the two reads differ, another run wrote the source while it
was listed, and what it listed may be older than what that run wrote: it is listed again, in the turn, and the
plan is made from that listing."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property

from cairn.errors import SourceError, StoreError, storage_reason
from cairn.flows.context import RunContext, storage_error
from cairn.flows.discovery import Planned, access_fingerprint, list_source, plan_listed, same_rows, source_origin
from cairn.flows.failpoints import failpoint
from cairn.flows.steps import Skip, WriteBatch
from cairn.flows.writer import BatchWriter
from cairn.index.ledger import IndexedDocument
from cairn.index.outcomes import Outcome, OutcomeKind, Outcomes
from cairn.index.plan import OUTDATED_WHY
from cairn.redact import redact
from cairn.schemas import TEMPORAL_OPEN, DocumentRef, SourceDocument
from cairn.schemas.recipe import recipe_changes, recipe_fingerprint, recipe_parts
from cairn.schemas.row_links import stamp_parts
from cairn.schemas.run_report import SOURCE_FAILURE, SourceReport
from cairn.schemas.source_config import SourceConfig
from cairn.sources import Source, source_cursor, source_history, source_recent_history

MASS_DELETE_FLOOR = 10  # under this many indexed documents, removals are not held to max_delete_share


@dataclass
class SourceSync:
    """Make the collection hold exactly what one source holds. A backfill re-processes every document in its
    window (an open window: all of them) through the same path; documents outside it are skipped when up to
    date, and with keep_history the source's past versions in the window are written too."""

    run: RunContext
    source_config: SourceConfig

    @property
    def name(self) -> str:
        return self.source_config.name

    @cached_property
    def access(self) -> str:
        return access_fingerprint(self.source_config)

    @cached_property
    def seen_at(self) -> int:
        """When this run saw the source: no version it writes is dated later (`observed`)."""
        return int(time.time())

    @cached_property
    def origin(self) -> str:
        return source_origin(self.source_config)

    @cached_property
    def recipe(self) -> str:
        return recipe_fingerprint(self.source_config, self.run.config.chunking)

    def sync(self) -> SourceReport:
        """This source's report. Anything that stops the source (a SourceError, or any error no step accounted
        for: a write the store refused, a bug) fails this source alone, with what it had done so far; only an
        index that cannot be used at all (StoreError) stops the run, and so does a write the storage refuses (a
        full disk, a read-only folder: StorageError)."""
        report = SourceReport()
        try:
            self._sync(report)
        except StoreError:
            raise
        except SourceError as exc:
            report.fail(self.name, SOURCE_FAILURE, str(exc))
        except Exception as exc:  # noqa: BLE001 - one source's failure never stops another
            reason = storage_reason(exc)
            if reason is not None:  # a full disk, a read-only folder: every source after it would fail the same way
                raise storage_error(self.run.config, exc, reason) from None
            report.fail(self.name, SOURCE_FAILURE, f"unexpected {type(exc).__name__}: {exc}")
        return report

    def _sync(self, report: SourceReport) -> None:
        run, name = self.run, self.name
        with run.writing():
            before, mark = run.store.ledger(name), run.store.mark()
        run.state.observe(mark)  # a cursor saved at another mark of the collection is dropped (index/state.py)
        listed = list_source(self.source_config, run.config, before, run.state, run.options, run.steps.discover)
        with run.writing():
            written = mark is None or run.store.mark() != mark  # by another run meanwhile: read again
            ledger = run.store.ledger(name) if written else before
            if written and not same_rows(before, ledger):  # another run wrote this source meanwhile
                run.state.observe(run.store.mark())
                listed = list_source(self.source_config, run.config, ledger, run.state, run.options, run.steps.discover)
            self._write(plan_listed(listed, ledger, self.source_config, run.options), report)

    def _claim(self, ledger: dict[str, IndexedDocument]) -> None:
        """Refuse (SourceError, before anything is written or removed) a source whose name rows written by another
        source hold: another configuration sharing this index, with a source of the same name elsewhere."""
        origins = {stamp_parts(key)[2] for doc in ledger.values() for key in doc.access}
        others = sorted(origins - {self.origin, ""})
        if others:
            raise SourceError(
                f"source {self.name!r} ({self.origin}) is refused: the index holds rows of another source of that name "
                f"({'; '.join(others)}), which it would remove: nothing written or removed. Rename one of them, or "
                f"`cairn drop --source {self.name}` if the other is gone"
            )

    def _recipe_changes(self, planned: Planned) -> list[str]:
        """What changed between the recipes the outdated documents' rows were made by and this run's
        (schemas/recipe.py), as the state file remembers them; this run's recipe is remembered for the next."""
        parts = recipe_parts(self.source_config, self.run.config.chunking)
        self.run.state.remember_recipe(self.recipe, parts)
        if not planned.plan.why.get(OUTDATED_WHY["recipe"]):
            return []
        outdated = {ref.document_id for ref in planned.plan.outdated}
        older = {stamp_parts(key)[1] for doc in outdated for key in planned.ledger[doc].access} - {self.recipe}
        changes: list[str] = []
        for fingerprint in sorted(older):
            before = self.run.state.recipe(fingerprint)
            found = recipe_changes(before, parts) if before is not None else ["rows made before recipes were recorded"]
            changes.extend(change for change in found if change not in changes)
        return changes

    def _write(self, planned: Planned, report: SourceReport) -> None:
        """Index, retire and save the cursor by the plan, in the run's turn with the writer slot."""
        self._claim(planned.ledger)
        report.recipe_changes = self._recipe_changes(planned)
        run, backfill = self.run, self.run.options.backfill
        mark = run.store.mark()  # before this source's writes (the slot is held: no one else's come between)
        planned.account(report, self.name)
        source, ledger, plan = planned.source, planned.ledger, planned.plan
        skip = None
        if backfill is not None:
            skip = Skip(backfill, frozenset(d for d, state in ledger.items() if state.complete_version is not None))
        emptied = self._retire_emptied(self._index(source, plan.to_index, ledger, skip, report), ledger)
        current = set(report.written_documents.get(self.name, ()))  # before the past versions: they are not served
        if self.source_config.keep_history:
            self._index_history(source, report)
        refusal = self._mass_delete(len(plan.stale_document_ids), len(ledger), report.documents.seen)
        if refusal:
            report.fail(self.name, SOURCE_FAILURE, refusal, policy=True)
        elif plan.stale_document_ids:
            stale = {document_id: sorted(ledger[document_id].rows) for document_id in plan.stale_document_ids}
            steps = run.steps
            report.documents.deleted = steps.runner.call(
                steps.retirer, self.name, stale, self.source_config.keep_history
            )
        run.store.flush()
        written = run.store.mark()
        run.state.advance(mark, written)  # cursors saved at the mark before follow it: the same write history
        record_outcomes(run.state.outcomes(self.name), planned, report, self.access, refusal)
        saved = source_cursor(source)
        if saved is not None:  # only now: a killed run re-reads the same window
            # the documents served now, which the next run's ledger holds: a past version of a file since deleted or
            # renamed is no document of the ledger, and counting it would drop this cursor on every later run
            held = (set(ledger) - emptied) | current
            if not refusal:
                held -= set(plan.stale_document_ids)
            run.state.put(self.name, saved, documents=len(held), mark=written)

    def _index_history(self, source: Source, report: SourceReport) -> None:
        """keep_history: a backfill's past versions (its window, or its last N commits); an ordinary run's, those
        the commits since the last run replaced, or on a first run those of the last `history_depth` commits, so
        that as-of questions answer from there without a backfill. Past versions are written beside the current
        ones (same ids for the same version: a version loaded twice is rewritten, with its exact end)."""
        backfill = self.run.options.backfill
        if backfill is not None:
            past = source_history(source, _datetime(backfill.since), _datetime(backfill.until), backfill.commits)
        else:
            past = source_recent_history(source, getattr(self.source_config, "history_depth", 0))
        if past is not None:
            past_refs = list(past)
            report.documents.history_versions += len(past_refs)  # not `seen`: the source listed them once
            self._index(source, past_refs, {}, None, report)

    def _mass_delete(self, stale: int, indexed: int, listed: int) -> str:
        """Why removing `stale` of `indexed` documents is refused (too large a share, or a source that listed
        nothing at all, however small), or ""."""
        share = self.source_config.max_delete_share
        emptied = stale > 0 and listed == 0
        if self.run.options.allow_mass_delete or not (
            emptied or (indexed >= MASS_DELETE_FLOOR and stale > share * indexed)
        ):
            return ""
        return (
            f"would remove {stale} of its {indexed} indexed documents ({stale / indexed:.0%}, over max_delete_share "
            f"{share:.0%}): nothing removed. If the source really lost them, run `cairn ingest --allow-mass-delete`; "
            "else check that its folder, bucket or repository is the right one and reachable"
        )

    def _index(
        self,
        source: Source,
        todo: list[DocumentRef],
        ledger: dict[str, IndexedDocument],
        skip: Skip | None,
        report: SourceReport,
    ) -> list[DocumentRef]:
        """Parse+chunk, embed and write each batch of `todo`, each write one batch behind (flows/writer.py); the
        documents that held nothing to index."""
        run, steps, size = self.run, self.run.steps, self.source_config.batch_size
        emptied: list[DocumentRef] = []
        if todo:  # the source's work, shown before its first batch is parsed
            run.progress.update(self.name, 0, len(todo))
        with BatchWriter(report, self.name) as writer:
            for start in range(0, len(todo), size):
                batch = todo[start : start + size]
                label = f"{self.name} {start // size + 1}/{-(-len(todo) // size)}"
                chunked = steps.runner.call(steps.chunker, label, source, batch, skip)
                failpoint("chunked")
                for item in chunked.documents:  # the access settings and recipe it is written under
                    observed(item.document, self.seen_at)
                    item.document.access, item.document.recipe = self.access, self.recipe
                    item.document.origin = self.origin
                report.documents.unchanged += chunked.skipped
                for locator, reason in chunked.failures:
                    report.fail(self.name, locator, reason)
                for locator, reason in chunked.refused:
                    report.fail(self.name, locator, reason, policy=True)
                for ref, reason in chunked.empty:
                    report.skip(self.name, ref.locator, reason)
                    emptied.append(ref)
                for item in chunked.documents:  # caveats a source noted on a document it could index (scanned pages)
                    for warning in item.document.warnings:
                        report.warn(self.name, item.document.locator, warning)
                if chunked.documents:
                    rows, stats = steps.runner.call(steps.embedder, label, chunked.documents)
                    report.model_seconds += stats.model_seconds
                    failpoint("embedded")
                    for locator, reason in stats.failed:
                        report.fail(self.name, locator, reason)
                    if stats.documents:
                        write = WriteBatch(rows, stats.documents, ledger, self.source_config.keep_history)
                        writer.submit(steps.runner.later(steps.writer, label, write), stats.documents, stats.computed)
                run.progress.update(self.name, start + len(batch), len(todo))
        return emptied

    def _retire_emptied(self, emptied: list[DocumentRef], ledger: dict[str, IndexedDocument]) -> set[str]:
        """A document indexed before that now holds nothing to index (emptied, front matter only) is taken out of
        service like a removed one, so the collection holds what the source holds; their ids."""
        held = {ref.document_id: sorted(ledger[ref.document_id].rows) for ref in emptied if ref.document_id in ledger}
        if held:
            steps = self.run.steps
            steps.runner.call(steps.retirer, self.name, held, self.source_config.keep_history)
        return set(held)


def record_outcomes(outcomes: Outcomes, planned: Planned, report: SourceReport, access: str, refusal: str) -> None:
    """What this sync did with the documents it read and the collection does not hold, for the next plan and for
    `cairn reconcile` (index/outcomes.py): skipped, failed or refused documents of the source's current listing
    saved at the version read; indexed or removed ones dropped; a removal the mass-delete guard held back saved as
    refused; and, after a complete listing, whatever the source no longer lists forgotten."""
    plan = planned.plan
    listed = {redact(ref.locator): ref for ref in plan.to_index}

    def outcome(locator: str, kind: OutcomeKind, reason: str) -> Outcome | None:
        ref = listed.get(locator)
        return None if ref is None else Outcome(ref.document_id, ref.locator, ref.version_hash, kind, reason, access)

    found: list[Outcome | None] = [outcome(s.document, "skipped", s.reason) for s in report.skipped if s.read]
    found += [outcome(f.document, "refused" if f.policy else "failed", f.error) for f in report.failures]
    held = plan.stale_document_ids if refusal else []
    found += [Outcome(doc, doc, "", "refused", f"removal held back: {refusal}", access) for doc in held]
    cleared = [*report.written_documents.get(outcomes.source, ()), *([] if refusal else plan.stale_document_ids)]
    complete = planned.found.complete and planned.source.complete
    keep = {r.document_id for r in planned.found.refs} | {f.document_id for f in planned.found.failures} | set(held)
    outcomes.settle([o for o in found if o is not None], cleared, keep if complete else None)


def observed(doc: SourceDocument, seen_at: int) -> None:
    """A version's dates, never later than `seen_at`, the run that saw it: a file dated 2100 (its mtime, its front
    matter, a commit's clock) is not served as "updated 2100" nor hidden from `--as-of` now, and the version that
    replaces it ends (temporal_end, its replacement's temporal_start) after it began. A past version's end is
    clamped too; its start is its row's identity (index/rows.py), kept."""
    doc.updated_at = min(doc.updated_at, seen_at)
    doc.created_at = min(doc.created_at, seen_at)
    if doc.is_current:
        doc.temporal_start = min(doc.temporal_start, seen_at)
    elif doc.temporal_end != TEMPORAL_OPEN:
        doc.temporal_end = max(min(doc.temporal_end, seen_at), doc.temporal_start)


def _datetime(value: int | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, tz=UTC)
