"""The ingest and backfill flows: discover -> parse+chunk a batch -> embed -> write -> retire, per source.

Tasks are coarse (a batch of documents each) and thin: the logic lives in sources/, chunkers/ and index/.
What is indexed is read from the collection itself at the start of each source (index/ledger.py), so a run
killed anywhere is repaired by the next: incomplete or doubled documents are re-indexed under the same
deterministic ids, leftovers removed.
"""
from __future__ import annotations

import sys
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from contextvars import copy_context
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable

import cairn.flows  # noqa: F401  (Prefect defaults before Prefect is imported)
from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE
from prefect.context import get_run_context
from prefect.utilities.annotations import quote as unvisited
from tqdm import tqdm

from cairn.chunkers import chunk_document
from cairn.embedding import Encoder, encoder_for
from cairn.errors import QualityFailed
from cairn.flows.failpoints import failpoint
from cairn.flows.runner import RunnerEncoder, runner_for_run
from cairn.index.cache import EmbeddingCache
from cairn.index.ledger import IndexedDocument
from cairn.index.lock import writer_lock
from cairn.index.rows import ChunkedDocument, build_rows
from cairn.index.state import SourceState
from cairn.index.store import MilvusStore
from cairn.index.sync import plan_sync
from cairn.schemas.collection import quote
from cairn.schemas.records import parse_day
from cairn.schemas.config import CairnConfig, ChunkingConfig, SourceConfig, load_config
from cairn.schemas.report import RunReport
from cairn.sources import DiscoveryFailure, DocumentError, Source, SourceError, open_source, source_cursor, source_history

ProgressHook = Callable[[str, int, int], None]  # (source name, documents done, documents to do)


@dataclass
class Discovery:
    refs: list
    failures: list[DiscoveryFailure]


@dataclass
class Window:
    """A backfill's time window over updated_at (epoch seconds, either end open)."""

    since: int | None = None
    until: int | None = None
    commits: int | None = None  # history backfill: versions written by the last N changes (git commits)

    def __contains__(self, when: int) -> bool:
        return (self.since is None or when >= self.since) and (self.until is None or when < self.until)


@dataclass
class Chunked:
    documents: list[ChunkedDocument] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    skipped: int = 0  # up to date and outside a backfill window


@task(cache_policy=NO_CACHE)
def discover(source: Source) -> Discovery:
    refs, failures = [], []
    for item in source.discover():
        (failures if isinstance(item, DiscoveryFailure) else refs).append(item)
    return Discovery(refs, failures)


@task(cache_policy=NO_CACHE)
def parse_and_chunk(
    source: Source, refs: list, chunking: ChunkingConfig, window: Window | None = None, up_to_date: frozenset = frozenset()
) -> Chunked:
    out = Chunked()
    for ref in refs:
        try:
            document = source.load(ref)
            if window is not None and ref.document_id in up_to_date and document.updated_at not in window:
                out.skipped += 1
                continue
            sections = chunk_document(document, chunking)
            if not sections:
                raise DocumentError(ref.locator, "no text to index after parsing")
            out.documents.append(ChunkedDocument(document, sections))
        except DocumentError as exc:
            out.failures.append((ref.locator, exc.reason))
        except Exception as exc:  # a parser bug on one input must not stop the others
            out.failures.append((ref.locator, f"unexpected {type(exc).__name__}: {exc}"))
    return out


@task(cache_policy=NO_CACHE)
def embed(chunked: list[ChunkedDocument], encoder: Encoder, cache: EmbeddingCache, batch_size: int):
    return build_rows(chunked, encoder, cache, batch_size)


@task(cache_policy=NO_CACHE)
def write(
    store: MilvusStore, rows: list[dict], chunked: list[ChunkedDocument], ledger: dict[str, IndexedDocument],
    history: bool,
) -> int:
    """New version first (children before parents), then everything else the documents had in service:
    a reader never finds a document missing."""
    size = store.config.write_batch_rows
    for start in range(0, len(rows), size):
        store.upsert(rows[start : start + size])
        failpoint("rows-batch-written")
    failpoint("written")
    written_ids: dict[str, set[str]] = {}
    for row in rows:
        written_ids.setdefault(row["document_id"], set()).add(row["chunk_id"])
    for item in chunked:
        doc = item.document
        if not doc.is_current:
            continue  # a past version from a history backfill sits beside the current one
        previous = ledger.get(doc.document_id)
        if previous is None:
            continue  # it had no current rows when the run began (the ledger reads them all): nothing to retire
        store.retire_other_versions(doc.document_id, doc.version_hash, history, at=doc.temporal_start)
        store.delete_chunks(previous.leftovers(doc.version_hash, written_ids.get(doc.document_id, set())))
    failpoint("retired")
    store.settle()  # Milvus Lite: memory and per-document cost stay those of one batch (index/store.py)
    return len(rows)


@task(cache_policy=NO_CACHE)
def retire_stale(store: MilvusStore, document_ids: list[str], history: bool) -> int:
    store.retire_documents(document_ids, history, at=int(time.time()))
    failpoint("stale-retired")
    return len(document_ids)


@dataclass
class _Writing:
    """A batch's write, running while the next batch is parsed and embedded."""

    future: Future
    documents: list[ChunkedDocument]
    computed: int

    def account(self, report: RunReport, source_name: str) -> None:
        """Wait for the write (its error, if any, is raised here) and count the batch as indexed."""
        report.rows_written += self.future.result()
        report.embeddings_computed += self.computed
        report.documents.indexed += len(self.documents)
        report.written_documents.setdefault(source_name, []).extend(item.document.document_id for item in self.documents)
        for item in self.documents:
            report.sections += len(item.sections)
            report.chunks += sum(len(s.chunks) for s in item.sections)
            report.tokens += sum(s.token_count for s in item.sections)


def _index_batches(todo, source, source_config, config, store, encoder, cache, ledger, report, progress, window=None):
    """Parse+chunk, embed and write each batch of `todo`. Writes run one batch behind, in a thread of their
    own: batch i is written while batch i+1 is parsed and embedded (the model keeps the CPU; a Milvus write
    mostly waits on Milvus). They stay in order, one at a time, and a failed write stops the run."""
    up_to_date = frozenset(d for d, state in ledger.items() if state.complete_version is not None)
    size = source_config.batch_size
    writing: _Writing | None = None
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="cairn-write") as writer:
        for start in range(0, len(todo), size):
            batch = todo[start : start + size]
            chunked = parse_and_chunk(source, batch, config.chunking, window, unvisited(up_to_date))
            failpoint("chunked")
            report.documents.unchanged += chunked.skipped
            for locator, reason in chunked.failures:
                report.fail(source_config.name, locator, reason)
            if chunked.documents:
                # On Dask the step runs as the flow's own code, so that its encode-texts tasks are submitted
                # from the flow run: a task submitted from inside a task carries its parent's parameters (the
                # cache, the documents) to the worker with it.
                # Large arguments go in unvisited() (Prefect's quote): Prefect would otherwise walk every
                # element (each row's 2 x 384 floats) looking for futures: 17% of a first ingest (cProfile).
                if isinstance(encoder, RunnerEncoder):
                    rows, stats = embed.fn(chunked.documents, encoder, cache, config.embedding.batch_size)
                else:
                    rows, stats = embed(unvisited(chunked.documents), encoder, cache, config.embedding.batch_size)
                failpoint("embedded")
                if writing is not None:
                    writing.account(report, source_config.name)
                # the task runs in the writer thread inside this flow run's context (as Prefect's own runner does)
                future = writer.submit(
                    copy_context().run, write, store, unvisited(rows), unvisited(chunked.documents),
                    unvisited(ledger), source_config.keep_history,
                )
                writing = _Writing(future, chunked.documents, stats.computed)
            if progress:
                progress(source_config.name, start + len(batch), len(todo))
        if writing is not None:
            writing.account(report, source_config.name)


def sync_source(
    source_config: SourceConfig,
    config: CairnConfig,
    store: MilvusStore,
    encoder: Encoder,
    cache: EmbeddingCache,
    state: SourceState,
    progress: ProgressHook | None = None,
    cleanup: str | None = None,
    backfill: Window | None = None,
    backfill_all: bool = False,
) -> RunReport:
    """Make the collection hold exactly what the source holds. A backfill re-processes every document in
    its window (or all of them) through the same path; documents outside it are skipped when up to date."""
    report = RunReport(run_id="", sources=[source_config.name])
    cleanup = cleanup or source_config.cleanup
    backfilling = backfill is not None or backfill_all
    try:
        # a full listing (cleanup "full" or a backfill) ignores the cursor: absence then means removal
        cursor = {} if cleanup == "full" or backfilling else state.get(source_config.name)
        source = open_source(source_config, cursor, s3=config.s3)
        found = discover(source)
    except SourceError as exc:
        report.fail(source_config.name, "*", str(exc))
        return report
    failpoint("discovered")
    report.documents.seen = len(found.refs) + len(found.failures)
    for failure in found.failures:
        report.fail(source_config.name, failure.locator, failure.reason)
    ledger = store.ledger(source_config.name)
    plan = plan_sync(
        found.refs,
        ledger,
        keep_ids={f.document_id for f in found.failures},
        cleanup=cleanup == "full" or (cleanup == "incremental" and source.complete),
        force={r.document_id for r in found.refs} if backfilling else None,
    )
    report.documents.unchanged = len(plan.unchanged)
    window = backfill if backfill is not None and not backfill_all else None
    _index_batches(plan.to_index, source, source_config, config, store, encoder, cache, ledger, report, progress, window)
    if backfill is not None and source_config.keep_history:
        past = source_history(source, from_ts(backfill.since), from_ts(backfill.until), backfill.commits)
        if past is not None:
            past_refs = list(past)
            report.documents.seen += len(past_refs)
            _index_batches(past_refs, source, source_config, config, store, encoder, cache, {}, report, progress)
    if plan.stale_document_ids:
        report.documents.deleted = retire_stale(store, plan.stale_document_ids, source_config.keep_history)
    store.flush()
    saved = source_cursor(source)
    if saved is not None:
        state.put(source_config.name, saved)  # only now: a killed run re-reads the same window
    return report


def from_ts(value: int | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, tz=timezone.utc)


def report_markdown(report: RunReport, title: str = "Cairn ingest") -> str:
    d = report.documents
    lines = [
        f"### {title} {report.run_id}",
        "",
        "| seen | indexed | unchanged | deleted | failed | sections | chunks | embeddings computed | seconds |",
        "|---|---|---|---|---|---|---|---|---|",
        f"| {d.seen} | {d.indexed} | {d.unchanged} | {d.deleted} | {d.failed} | {report.sections} | {report.chunks} "
        f"| {report.embeddings_computed} | {report.seconds:.1f} |",
    ]
    if report.failures:
        lines += ["", "| source | document | error |", "|---|---|---|"]
        lines += [f"| {f.source} | {f.document} | {f.error.replace('|', '/')} |" for f in report.failures]
    return "\n".join(lines)


def run_sources(
    config_path: str | None,
    source: str | None,
    show_progress: bool,
    cleanup: str | None = None,
    backfill: Window | None = None,
    backfill_all: bool = False,
    wait_seconds: float = 0.0,
    title: str = "Cairn ingest",
) -> dict:
    started = time.perf_counter()
    config = load_config(config_path)
    selected = [config.source(source)] if source else config.sources
    context = get_run_context()
    report = RunReport(run_id=str(getattr(context.flow_run, "id", uuid.uuid4())))
    with writer_lock(config.milvus, wait_seconds), runner_for_run(config.runner) as runner:
        encoder = encoder_for(config.embedding)
        if runner is not None:  # [runner] kind = "dask": texts to embed go to the workers (flows/runner.py)
            encoder = RunnerEncoder(encoder, runner, config.runner.workers)
        cache = EmbeddingCache(config.embedding.cache_path, encoder.dim)
        store = MilvusStore(config.milvus, encoder.dim)
        state = SourceState(config.state_path)
        bar = tqdm(desc="documents", unit="doc", disable=not show_progress, file=sys.stderr)

        def progress(name: str, done: int, total: int) -> None:
            bar.set_description(name)
            bar.total = total
            bar.n = done
            bar.refresh()

        try:
            store.ensure_collection(embedder=encoder.identity)
            for source_config in selected:
                part = sync_source(
                    source_config, config, store, encoder, cache, state, progress, cleanup, backfill, backfill_all
                )
                report.merge(part)
                report.sources.append(source_config.name)
        finally:
            bar.close()
            store.close()
            cache.close()
            state.close()
    quality = None
    if config.quality.on_ingest and report.written_documents:
        checked = time.perf_counter()
        quality = check_quality(config, report.written_documents, encoder.dim, report.run_id)
        report.quality = {
            "success": quality.success, "report_dir": quality.report_dir,
            "failed": [f"{r.suite}: {r.column}" for r in quality.failed()],
            "seconds": round(time.perf_counter() - checked, 3),
        }
    report.seconds = time.perf_counter() - started
    create_markdown_artifact(key="cairn-run-report", markdown=report_markdown(report, title), description=title)
    if report.failures:
        get_run_logger().warning("%d input(s) failed; see the run report", len(report.failures))
    if quality is not None and not quality.success:
        strict = {s.name for s in selected if s.quality_policy == "fail"} & quality.failed_sources()
        if strict:
            raise QualityFailed(
                f"data quality failed for {', '.join(sorted(strict))} (quality_policy = \"fail\"); "
                f"report: {quality.report_dir}/index.html"
            )
        get_run_logger().warning("data-quality expectations failed; report: %s/index.html", quality.report_dir)
    return report.to_dict()


@task(cache_policy=NO_CACHE)
def check_quality(config: CairnConfig, written: dict[str, list[str]], dim: int, run_id: str):
    """Great-expectations over the current rows of the documents this run wrote (whole sources when a run
    wrote many), a report folder, and a Prefect artifact with the table."""
    from cairn.quality import check_rows
    from cairn.quality.report import report_markdown
    from cairn.schemas.collection import in_list

    parts = []
    for source, ids in written.items():
        scope = f"source_name == {quote(source)}"
        parts.append(f"({scope} and {in_list('document_id', ids)})" if len(ids) <= 2000 else f"({scope})")
    expr = f"is_current == true and ({' or '.join(parts)})"
    result = check_rows(config, expr, dim, name=f"run-{run_id[:8]}", title=f"Cairn data quality, run {run_id}")
    create_markdown_artifact(key="cairn-quality-report", markdown=report_markdown(result), description="Cairn data quality")
    return result


@flow(name="cairn-ingest")
def ingest_flow(
    config_path: str | None = None,
    source: str | None = None,
    show_progress: bool = False,
    cleanup: str | None = None,
    wait_seconds: float = 0.0,
) -> dict:
    """Bring the collection in line with the configured sources (all, or the one named)."""
    return run_sources(config_path, source, show_progress, cleanup=cleanup, wait_seconds=wait_seconds)


@flow(name="cairn-backfill")
def backfill_flow(
    config_path: str | None = None,
    source: str | None = None,
    since: str | None = None,
    until: str | None = None,
    full: bool = False,
    show_progress: bool = False,
    wait_seconds: float = 0.0,
    commits: int | None = None,
) -> dict:
    """Re-process a window of documents (updated_at in [since, until)) or all of them (full) through the
    ingest path, idempotently; with keep_history, past versions in the window (or written by the last
    `commits` commits) too, for sources that have them."""
    window = Window(parse_day(since), parse_day(until), commits)
    return run_sources(
        config_path, source, show_progress, backfill=window, backfill_all=full, wait_seconds=wait_seconds,
        title="Cairn backfill",
    )
