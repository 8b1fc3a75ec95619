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
from cairn.errors import DocumentError, Fault, fault_of
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


@dataclass
class Written:
    """What a batch's write did: rows that landed, and the documents the index refused (document_id -> reason)."""

    rows: int = 0
    refused: dict[str, str] = field(default_factory=dict)


def write(store: MilvusStore, batch: WriteBatch) -> Written:
    """New version first (children before parents), then everything else the documents had in service:
    a reader never finds a document missing. A document the index refuses fails alone (written again on its
    own to find which); a store that refuses every document fails the batch, and so the source."""
    try:
        _upsert(store, batch.rows)
    except Exception as exc:  # noqa: BLE001 - which document? write each alone (see _each_document)
        by_document: dict[str, list[dict]] = {}
        for row in batch.rows:
            by_document.setdefault(row["document_id"], []).append(row)
        refused = _each_document(by_document, lambda rows: _upsert(store, rows), exc, "the index refused its rows")
    else:
        refused = {}
    failpoint("written")
    written_ids: dict[str, set[str]] = {}
    for row in batch.rows:
        written_ids.setdefault(row["document_id"], set()).add(row["chunk_id"])
    retiring = {
        item.document.document_id: (item.document, batch.ledger[item.document.document_id])
        for item in batch.documents  # a past version (history backfill) sits beside the current one; a
        if item.document.is_current  # document with no current rows when the run began has nothing to retire
        and item.document.document_id in batch.ledger and item.document.document_id not in refused
    }

    def retire(pair: tuple) -> None:
        doc, previous = pair
        store.retire_other_versions(doc.document_id, doc.version_hash, batch.history, at=doc.temporal_start)
        store.delete_chunks(previous.leftovers(doc.version_hash, written_ids.get(doc.document_id, set())))

    refused.update(_each_document(retiring, retire, None, "retiring its previous version failed"))
    failpoint("retired")
    store.settle()  # Milvus Lite: memory and per-document cost stay those of one batch (index/store.py)
    return Written(sum(1 for row in batch.rows if row["document_id"] not in refused), refused)


def _upsert(store: MilvusStore, rows: list[dict]) -> None:
    size = store.config.write_batch_rows
    for start in range(0, len(rows), size):
        store.upsert(rows[start : start + size])
        failpoint("rows-batch-written")


def _each_document(work: dict, action, first: Exception | None, what: str) -> dict[str, str]:
    """Run `action` on each document's item; document_id -> reason for those that raised. When every one
    raised, and not over its own data, the store is what fails: raise, and the source fails as a whole (so
    does a run whose first STORE_DOWN_AFTER documents all fail that way: a server that is down is not asked
    once per document, each waiting for its timeout). A document refused after part of its new rows landed
    is visibly incomplete in the ledger, and the next run writes it again."""
    refused: dict[str, str] = {}
    errors: list[Exception] = []
    for tried, (document_id, item) in enumerate(work.items(), 1):
        try:
            action(item)
        except Exception as exc:  # noqa: BLE001 - one document's fault must not cost the batch
            errors.append(exc)
            refused[document_id] = f"{what}: {type(exc).__name__}: {exc}"
            if len(errors) == tried >= STORE_DOWN_AFTER and not any(fault_of(e) is Fault.DATA for e in errors):
                raise first if first is not None else errors[0]
    cause = first if first is not None else (errors[0] if errors else None)
    if work and len(refused) == len(work) and fault_of(cause) is not Fault.DATA:
        raise cause
    return refused


STORE_DOWN_AFTER = 3  # documents in a row refused (none written, none over its data) before the store is blamed


def retire_stale(store: MilvusStore, document_ids: list[str], history: bool) -> int:
    """Take documents the source no longer yields out of service (deleted, or superseded with history)."""
    store.retire_documents(document_ids, history, at=int(time.time()))
    failpoint("stale-retired")
    return len(document_ids)
