"""One source brought in line with the collection: discover, plan, index the batches, retire what is gone,
save the cursor. What is indexed is read from the collection itself at the start (index/ledger.py), so a run
killed anywhere is repaired by the next: incomplete or doubled documents are re-indexed under the same
deterministic ids, leftovers removed."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from cairn.errors import SourceError
from cairn.flows.context import RunContext
from cairn.flows.failpoints import failpoint
from cairn.flows.steps import Skip, WriteBatch
from cairn.flows.writer import BatchWriter
from cairn.index.ledger import IndexedDocument
from cairn.index.sync import plan_sync
from cairn.schemas import DocumentRef
from cairn.schemas.config import SourceConfig
from cairn.schemas.report import RunReport
from cairn.sources import Source, open_source, source_cursor, source_history


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

    def sync(self) -> RunReport:
        run, backfill = self.run, self.run.options.backfill
        report = RunReport(run_id="", sources=[self.name])
        cleanup = run.options.cleanup or self.source_config.cleanup
        try:
            # a full listing (cleanup "full" or a backfill) ignores the cursor: absence then means removal
            cursor = {} if cleanup == "full" or backfill is not None else run.state.get(self.name)
            source = open_source(self.source_config, cursor, s3=run.config.s3)
            found = run.steps.discover(source)
        except SourceError as exc:
            report.fail(self.name, "*", str(exc))
            return report
        failpoint("discovered")
        report.documents.seen = len(found.refs) + len(found.failures)
        for failure in found.failures:
            report.fail(self.name, failure.locator, failure.reason)
        ledger = run.store.ledger(self.name)
        plan = plan_sync(
            found.refs, ledger, keep_ids={f.document_id for f in found.failures},
            cleanup=cleanup == "full" or (cleanup == "incremental" and source.complete),
            force={r.document_id for r in found.refs} if backfill is not None else None,
        )
        report.documents.unchanged = len(plan.unchanged)
        skip = None
        if backfill is not None:
            skip = Skip(backfill, frozenset(d for d, state in ledger.items() if state.complete_version is not None))
        self._index(source, plan.to_index, ledger, skip, report)
        if backfill is not None and self.source_config.keep_history:
            past = source_history(source, _datetime(backfill.since), _datetime(backfill.until), backfill.commits)
            if past is not None:
                past_refs = list(past)
                report.documents.seen += len(past_refs)
                self._index(source, past_refs, {}, None, report)
        if plan.stale_document_ids:
            report.documents.deleted = run.steps.retire_stale(run.store, plan.stale_document_ids, self.source_config.keep_history)
        run.store.flush()
        saved = source_cursor(source)
        if saved is not None:
            run.state.put(self.name, saved)  # only now: a killed run re-reads the same window
        return report

    def _index(self, source: Source, todo: list[DocumentRef], ledger: dict[str, IndexedDocument], skip: Skip | None,
               report: RunReport) -> None:
        """Parse+chunk, embed and write each batch of `todo`, each write one batch behind (flows/writer.py)."""
        run, size = self.run, self.source_config.batch_size
        with BatchWriter(report, self.name) as writer:
            for start in range(0, len(todo), size):
                batch = todo[start : start + size]
                chunked = run.steps.chunk(source, batch, run.config.chunking, skip)
                failpoint("chunked")
                report.documents.unchanged += chunked.skipped
                for locator, reason in chunked.failures:
                    report.fail(self.name, locator, reason)
                if chunked.documents:
                    rows, stats = run.steps.embed(chunked.documents, run.encoder, run.cache, run.config.embedding.batch_size)
                    failpoint("embedded")
                    write = WriteBatch(rows, chunked.documents, ledger, self.source_config.keep_history)
                    writer.submit(run.steps.write_in_context(run.store, write), chunked.documents, stats.computed)
                run.progress.update(self.name, start + len(batch), len(todo))


def _datetime(value: int | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, tz=timezone.utc)
