"""The ingest flow: discover -> parse+chunk a batch -> embed -> write -> clean up, per source.

Tasks are coarse (a batch of documents each) and thin: the logic lives in sources/, chunkers/ and index/.
"""
from __future__ import annotations

import sys
import time
import uuid
from dataclasses import dataclass
from typing import Callable

import flows  # noqa: F401  (Prefect defaults before Prefect is imported)
from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE
from prefect.context import get_run_context
from tqdm import tqdm

from chunkers import chunk_document
from embedding import Encoder, load_encoder
from index.cache import EmbeddingCache
from index.rows import ChunkedDocument, build_rows
from index.state import SourceState
from index.store import MilvusStore
from index.sync import plan_sync
from schemas.config import CairnConfig, ChunkingConfig, SourceConfig, load_config
from schemas.report import RunReport
from sources import DiscoveryFailure, DocumentError, Source, SourceError, open_source, source_cursor

ProgressHook = Callable[[str, int, int], None]  # (source name, documents done, documents to do)


@dataclass
class Discovery:
    refs: list
    failures: list[DiscoveryFailure]


@task(cache_policy=NO_CACHE)
def discover(source: Source) -> Discovery:
    refs, failures = [], []
    for item in source.discover():
        (failures if isinstance(item, DiscoveryFailure) else refs).append(item)
    return Discovery(refs, failures)


@task(cache_policy=NO_CACHE)
def parse_and_chunk(source: Source, refs: list, chunking: ChunkingConfig) -> tuple[list[ChunkedDocument], list[tuple[str, str]]]:
    chunked, failures = [], []
    for ref in refs:
        try:
            document = source.load(ref)
            sections = chunk_document(document, chunking)
            if not sections:
                raise DocumentError(ref.locator, "no text to index after parsing")
            chunked.append(ChunkedDocument(document, sections))
        except DocumentError as exc:
            failures.append((ref.locator, exc.reason))
        except Exception as exc:  # a parser bug on one input must not stop the others
            failures.append((ref.locator, f"unexpected {type(exc).__name__}: {exc}"))
    return chunked, failures


@task(cache_policy=NO_CACHE)
def embed(chunked: list[ChunkedDocument], encoder: Encoder, cache: EmbeddingCache, batch_size: int):
    return build_rows(chunked, encoder, cache, batch_size)


@task(cache_policy=NO_CACHE)
def write(store: MilvusStore, rows: list[dict], chunked: list[ChunkedDocument]) -> int:
    """New version first, then the old versions of the same documents: a reader never finds one missing."""
    written = store.upsert(rows)
    for item in chunked:
        store.delete_other_versions(item.document.document_id, item.document.version_hash)
    return written


@task(cache_policy=NO_CACHE)
def delete_stale(store: MilvusStore, document_ids: list[str]) -> int:
    store.delete_documents(document_ids)
    return len(document_ids)


def sync_source(
    source_config: SourceConfig,
    config: CairnConfig,
    store: MilvusStore,
    encoder: Encoder,
    cache: EmbeddingCache,
    state: SourceState,
    progress: ProgressHook | None = None,
    cleanup: str | None = None,
) -> RunReport:
    report = RunReport(run_id="", sources=[source_config.name])
    cleanup = cleanup or source_config.cleanup
    try:
        # cleanup "full" ignores the cursor: the source lists everything, so absence means removal
        source = open_source(source_config, {} if cleanup == "full" else state.get(source_config.name))
        found = discover(source)
    except SourceError as exc:
        report.fail(source_config.name, "*", str(exc))
        return report
    report.documents.seen = len(found.refs) + len(found.failures)
    for failure in found.failures:
        report.fail(source_config.name, failure.locator, failure.reason)
    plan = plan_sync(
        found.refs,
        store.indexed_versions(source_config.name),
        keep_ids={f.document_id for f in found.failures},
        cleanup=cleanup == "full" or (cleanup == "incremental" and source.complete),
    )
    report.documents.unchanged = len(plan.unchanged)
    todo, size = plan.to_index, source_config.batch_size
    for start in range(0, len(todo), size):
        batch = todo[start : start + size]
        chunked, failures = parse_and_chunk(source, batch, config.chunking)
        for locator, reason in failures:
            report.fail(source_config.name, locator, reason)
        if chunked:
            rows, stats = embed(chunked, encoder, cache, config.embedding.batch_size)
            report.rows_written += write(store, rows, chunked)
            report.embeddings_computed += stats.computed
            report.documents.indexed += len(chunked)
            for item in chunked:
                report.sections += len(item.sections)
                report.chunks += sum(len(s.chunks) for s in item.sections)
                report.tokens += sum(s.token_count for s in item.sections)
        if progress:
            progress(source_config.name, start + len(batch), len(todo))
    if plan.stale_document_ids:
        report.documents.deleted = delete_stale(store, plan.stale_document_ids)
    store.flush()
    cursor = source_cursor(source)
    if cursor is not None:
        state.put(source_config.name, cursor)  # only now: a killed run re-reads the same window
    return report


def report_markdown(report: RunReport) -> str:
    d = report.documents
    lines = [
        f"### Cairn ingest {report.run_id}",
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


@flow(name="cairn-ingest")
def ingest_flow(
    config_path: str | None = None, source: str | None = None, show_progress: bool = False, cleanup: str | None = None
) -> dict:
    """Bring the collection in line with the configured sources (all, or the one named)."""
    started = time.perf_counter()
    config = load_config(config_path)
    selected = [config.source(source)] if source else config.sources
    context = get_run_context()
    report = RunReport(run_id=str(getattr(context.flow_run, "id", uuid.uuid4())))
    encoder = load_encoder(config.embedding.model)
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
        store.ensure_collection()
        for source_config in selected:
            part = sync_source(source_config, config, store, encoder, cache, state, progress, cleanup)
            report.merge(part)
            report.sources.append(source_config.name)
        store.flush()
    finally:
        bar.close()
        store.close()
        cache.close()
        state.close()
    report.seconds = time.perf_counter() - started
    create_markdown_artifact(key="cairn-ingest-report", markdown=report_markdown(report), description="Cairn ingest run report")
    if report.failures:
        get_run_logger().warning("%d input(s) failed; see the run report", len(report.failures))
    return report.to_dict()
