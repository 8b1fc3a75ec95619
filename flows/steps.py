"""The steps of an ingest, as plain functions over typed records: discover, parse+chunk, embed, write, retire.

No Prefect here: flows/tasks.py runs each step as a Prefect task, flows/sync.py decides which step runs on
what. Discovery and planning live in flows/plan.py (the no-op check uses them without the rest). The logic
itself lives in the layers below (sources/, chunkers/, index/); these functions only join
them and account for every input.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from cairn.chunkers import chunk_document
from cairn.embedding import Encoder
from cairn.errors import DocumentError
from cairn.flows.failpoints import failpoint
from cairn.flows.options import Window
from cairn.index.cache import EmbeddingCache
from cairn.index.ledger import IndexedDocument
from cairn.index.rows import ChunkedDocument, EmbedStats, build_rows
from cairn.index.store import MilvusStore
from cairn.schemas import DocumentRef
from cairn.schemas.config import ChunkingConfig
from cairn.sources import Source


@dataclass(frozen=True)
class Skip:
    """Documents a backfill leaves alone: up to date in the collection, and updated outside its window."""

    window: Window
    up_to_date: frozenset[str]

    def __call__(self, document_id: str, updated_at: int) -> bool:
        return document_id in self.up_to_date and updated_at not in self.window


@dataclass
class Chunked:
    documents: list[ChunkedDocument] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)  # (locator, reason)
    skipped: int = 0  # up to date and outside a backfill window


@dataclass
class WriteBatch:
    """A batch's rows and what the writer needs to retire what they replace."""

    rows: list[dict]
    documents: list[ChunkedDocument]
    ledger: dict[str, IndexedDocument]  # the source's rows when the run began
    history: bool  # keep superseded versions (is_current false) instead of deleting them


def parse_and_chunk(source: Source, refs: list[DocumentRef], chunking: ChunkingConfig, skip: Skip | None = None) -> Chunked:
    """Load and chunk each document; one that fails is reported by its locator and the rest go on."""
    out = Chunked()
    for ref in refs:
        try:
            document = source.load(ref)
            if skip is not None and skip(ref.document_id, document.updated_at):
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


def embed(documents: list[ChunkedDocument], encoder: Encoder, cache: EmbeddingCache, batch_size: int) -> tuple[list[dict], EmbedStats]:
    """Rows with both vectors for a batch; only texts the cache lacks reach the model."""
    return build_rows(documents, encoder, cache, batch_size)


def write(store: MilvusStore, batch: WriteBatch) -> int:
    """New version first (children before parents), then everything else the documents had in service:
    a reader never finds a document missing."""
    size = store.config.write_batch_rows
    for start in range(0, len(batch.rows), size):
        store.upsert(batch.rows[start : start + size])
        failpoint("rows-batch-written")
    failpoint("written")
    written_ids: dict[str, set[str]] = {}
    for row in batch.rows:
        written_ids.setdefault(row["document_id"], set()).add(row["chunk_id"])
    for item in batch.documents:
        doc = item.document
        if not doc.is_current:
            continue  # a past version from a history backfill sits beside the current one
        previous = batch.ledger.get(doc.document_id)
        if previous is None:
            continue  # it had no current rows when the run began (the ledger reads them all): nothing to retire
        store.retire_other_versions(doc.document_id, doc.version_hash, batch.history, at=doc.temporal_start)
        store.delete_chunks(previous.leftovers(doc.version_hash, written_ids.get(doc.document_id, set())))
    failpoint("retired")
    store.settle()  # Milvus Lite: memory and per-document cost stay those of one batch (index/store.py)
    return len(batch.rows)


def retire_stale(store: MilvusStore, document_ids: list[str], history: bool) -> int:
    """Take documents the source no longer yields out of service (deleted, or superseded with history)."""
    store.retire_documents(document_ids, history, at=int(time.time()))
    failpoint("stale-retired")
    return len(document_ids)
