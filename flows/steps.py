"""The steps of an ingest as components: each built once per run with what it needs (RunContext.open), each with
one typed `run()`: Chunker (parse+chunk), Embedder, RowWriter, StaleRetirer; Discoverer is flows/discovery.py's.

No Prefect here: `IngestSteps` is what flows/sync.py drives, and every call goes through one `StepRunner`,
flows/tasks.py PrefectRunner (each call a task of the current flow run) or InlineRunner (the step called directly:
a run with no Prefect API, flows/run.py InlineHost; unit tests). The logic itself lives in the layers below (sources/,
chunkers/, index/); these components only join them and account for every input.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import ClassVar, ParamSpec, Protocol, TypeVar

from cairn.chunkers import chunk_document
from cairn.embedding import Encoder
from cairn.errors import DocumentError, DocumentRefused, Fault, NothingToIndex, fault_of
from cairn.flows.discovery import Discoverer, Discovery
from cairn.flows.failpoints import failpoint
from cairn.flows.options import Window
from cairn.index.cache import EmbeddingCache
from cairn.index.ledger import IndexedDocument
from cairn.index.protocol import IndexStore
from cairn.index.rows import ChunkedDocument, EmbedStats, build_rows
from cairn.retries import RetryPolicy
from cairn.schemas import DocumentRef
from cairn.schemas.config import CairnConfig, ChunkingConfig
from cairn.schemas.rows import ChunkRow
from cairn.sources import Source


@dataclass(frozen=True)
class Skip:
    """Documents a backfill leaves alone: up to date in the collection, and updated outside its window."""

    window: Window
    up_to_date: frozenset[str]

    def __call__(self, document_id: str, updated_at: int) -> bool:
        return document_id in self.up_to_date and updated_at not in self.window


# A write the store refused as a whole (a server restarting, a timeout) is tried again after 1 s, then after 4 s: the
# one policy both runners execute (cairn/retries.py).
WRITE_RETRIES = RetryPolicy(delays=(1.0, 4.0))


@dataclass
class Chunked:
    documents: list[ChunkedDocument] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)  # (locator, reason)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (locator, reason): failed, refused by a policy
    empty: list[tuple[DocumentRef, str]] = field(default_factory=list)  # nothing to index in them, and why
    skipped: int = 0  # up to date and outside a backfill window


@dataclass
class WriteBatch:
    """A batch's rows and what the writer needs to retire what they replace."""

    rows: list[ChunkRow]
    documents: list[ChunkedDocument]
    ledger: dict[str, IndexedDocument]  # the source's rows when the run began
    history: bool  # keep superseded versions (is_current false) instead of deleting them


class Chunker:
    """Load and chunk a batch of documents; one that fails is reported by its locator and the rest go on, and one
    that holds nothing to index (NothingToIndex) is set apart with the reason."""

    name: ClassVar[str] = "parse-and-chunk"
    retried: ClassVar[bool] = False
    in_flow: ClassVar[bool] = False

    def __init__(self, chunking: ChunkingConfig) -> None:
        self.chunking = chunking

    def run(self, source: Source, refs: list[DocumentRef], skip: Skip | None = None) -> Chunked:
        out = Chunked()
        for ref in refs:
            try:
                document = source.load(ref)
                if skip is not None and skip(ref.document_id, document.updated_at):
                    out.skipped += 1
                    continue
                sections = chunk_document(document, self.chunking)
                if not sections:
                    raise NothingToIndex(ref.locator, "no text left after parsing: nothing to index")
                out.documents.append(ChunkedDocument(document, sections))
            except NothingToIndex as exc:
                out.empty.append((ref, exc.reason))
            except DocumentRefused as exc:
                out.refused.append((ref.locator, exc.reason))
            except DocumentError as exc:
                out.failures.append((ref.locator, exc.reason))
            except Exception as exc:  # noqa: BLE001 - a parser bug on one input must not stop the others
                out.failures.append((ref.locator, f"unexpected {type(exc).__name__}: {exc}"))
        return out


class Embedder:
    """Rows with both vectors for a batch (index/rows.py); only texts the cache lacks reach the model. `in_flow`:
    the encoder sends its model work out as tasks of its own (a Dask runner, flows/dask_runner.py), so the step runs
    as the flow's own code: a task submitted from inside a task would carry its parent's arguments with it."""

    name: ClassVar[str] = "embed"
    retried: ClassVar[bool] = False

    def __init__(self, encoder: Encoder, cache: EmbeddingCache, batch_size: int, in_flow: bool = False) -> None:
        self.encoder = encoder
        self.cache = cache
        self.batch_size = batch_size
        self.in_flow = in_flow

    def run(self, documents: list[ChunkedDocument]) -> tuple[list[ChunkRow], EmbedStats]:
        """The batch's rows; the texts the model embeds told to the run's progress display as they go (not for
        model work sent out as tasks: slicing it would cut each task smaller)."""
        from cairn.flows import progress

        told = None if self.in_flow else partial(progress.embedding, len(documents))
        return build_rows(documents, self.encoder, self.cache, self.batch_size, told)


@dataclass
class Written:
    """What a batch's write did: rows that landed, and the documents the index refused (document_id -> reason)."""

    rows: int = 0
    refused: dict[str, str] = field(default_factory=dict)


class RowWriter:
    """A batch's write: its rows, then the retirement of what they replace. Writes are idempotent (upserts by
    deterministic id, retirements and deletes by the ids the ledger holds), so a retry is safe."""

    name: ClassVar[str] = "write"
    retried: ClassVar[bool] = True
    in_flow: ClassVar[bool] = False

    def __init__(self, store: IndexStore) -> None:
        self.store = store

    def run(self, batch: WriteBatch) -> Written:
        """New version first (children before parents), then everything else the documents had in service
        (the ledger's rows of other versions retired, leftovers of its own version deleted, by id): a reader never
        finds a document missing. A document the index refuses fails alone (written again on its own to find
        which); a store that refuses every document fails the batch, and so the source."""
        store = self.store
        try:
            _upsert(store, batch.rows)
        except Exception as exc:  # noqa: BLE001 - which document? write each alone (see _each_document)
            by_document: dict[str, list[ChunkRow]] = {}
            for row in batch.rows:
                by_document.setdefault(row.document_id, []).append(row)
            refused = _each_document(by_document, lambda rows: _upsert(store, rows), exc, "the index refused its rows")
        else:
            refused = {}
        failpoint("written")
        written_ids: dict[str, set[str]] = {}
        for row in batch.rows:
            written_ids.setdefault(row.document_id, set()).add(row.chunk_id)
        retiring = {
            item.document.document_id: (item.document, batch.ledger[item.document.document_id])
            for item in batch.documents  # a past version (history backfill) sits beside the current one; a
            if item.document.is_current  # document with no current rows when the run began has nothing to retire
            and item.document.document_id in batch.ledger
            and item.document.document_id not in refused
        }

        def retire(pair: tuple) -> None:
            doc, previous = pair  # by the ledger's ids, every row to retire (index/protocol.py retire_chunks)
            store.retire_chunks(previous.superseded(doc.version_hash), batch.history, at=doc.temporal_start)
            store.delete_chunks(previous.leftovers(doc.version_hash, written_ids.get(doc.document_id, set())))

        refused.update(_each_document(retiring, retire, None, "retiring its previous version failed"))
        failpoint("retired")
        store.settle()  # Milvus Lite: memory and per-document cost stay those of one batch (index/store.py)
        return Written(sum(1 for row in batch.rows if row.document_id not in refused), refused)


def _upsert(store: IndexStore, rows: list[ChunkRow]) -> None:
    size = store.config.write_batch_rows
    for start in range(0, len(rows), size):
        store.upsert(rows[start : start + size])
        failpoint("rows-batch-written")


_Item = TypeVar("_Item")


def _each_document(
    work: dict[str, _Item], action: Callable[[_Item], None], first: Exception | None, what: str
) -> dict[str, str]:
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
            raise first if first is not None else errors[0]  # outside the except: no other document's error chained
    if work and len(refused) == len(work):
        cause = first if first is not None else errors[0]  # every document raised: errors is not empty
        if fault_of(cause) is not Fault.DATA:
            raise cause
    return refused


STORE_DOWN_AFTER = 3  # documents in a row refused (none written, none over its data) before the store is blamed


class StaleRetirer:
    """Take documents the source no longer yields out of service (deleted, or superseded with history), by the
    ids of their rows in the ledger."""

    name: ClassVar[str] = "retire-stale"
    retried: ClassVar[bool] = True
    in_flow: ClassVar[bool] = False

    def __init__(self, store: IndexStore) -> None:
        self.store = store

    def run(self, stale: dict[str, list[str]], history: bool) -> int:
        """`stale`: document_id -> the chunk ids of its current rows; how many documents were retired."""
        self.store.retire_chunks([chunk_id for ids in stale.values() for chunk_id in ids], history, int(time.time()))
        failpoint("stale-retired")
        return len(stale)


P = ParamSpec("P")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class Step(Protocol[P, R_co]):
    """A component as a runner sees it: the task it runs as, whether a call the store refused is retried
    (idempotent writes), whether it runs as the flow's own code rather than a task of it (`in_flow`), and its one
    run(), typed by each component: what a runner's call takes and returns is the step's."""

    name: ClassVar[str]
    retried: ClassVar[bool]

    @property
    def in_flow(self) -> bool: ...

    def run(self, *args: P.args, **kwargs: P.kwargs) -> R_co: ...


class StepRunner(Protocol):
    """How each call of a step runs; `label` names what it works on (`wiki 3/12`)."""

    def call(self, step: Step[P, R], label: str, *args: P.args, **kwargs: P.kwargs) -> R:
        """Run the step now, in this thread; its result."""
        ...

    def later(self, step: Step[P, R], label: str, *args: P.args, **kwargs: P.kwargs) -> Callable[[], R]:
        """The call, to be run by another thread (the writer's, flows/writer.py)."""
        ...


class InlineRunner:
    """Each step called directly in this process, without Prefect (flows/run.py InlineHost, unit tests). A step
    whose calls are idempotent writes (`Step.retried`) is retried as a Prefect task would be: when the store
    refused it as a whole (a server restarting, a timeout), never when it fails the same way every time."""

    def call(self, step: Step[P, R], label: str, *args: P.args, **kwargs: P.kwargs) -> R:
        return WRITE_RETRIES.call(step.run, *args, **kwargs) if step.retried else step.run(*args, **kwargs)

    def later(self, step: Step[P, R], label: str, *args: P.args, **kwargs: P.kwargs) -> Callable[[], R]:
        return partial(self.call, step, label, *args, **kwargs)


@dataclass(frozen=True)
class IngestSteps:
    """The run's steps, each bound once to what it needs, and the runner every call goes through. A label names
    what a call works on (`wiki 3/12`): under Prefect, its task run is named after it (`parse-and-chunk wiki 3/12`)."""

    discoverer: Discoverer
    chunker: Chunker
    embedder: Embedder
    writer: RowWriter
    retirer: StaleRetirer
    runner: StepRunner

    @classmethod
    def bind(
        cls, config: CairnConfig, encoder: Encoder, cache: EmbeddingCache, store: IndexStore, runner: StepRunner
    ) -> IngestSteps:
        """Every step of a run over `store`, with the settings of `config` ([chunking], [embedding])."""
        embedder = Embedder(encoder, cache, config.embedding.batch_size, in_flow=config.runner.kind == "dask")
        return cls(Discoverer(), Chunker(config.chunking), embedder, RowWriter(store), StaleRetirer(store), runner)

    def discover(self, source: Source) -> Discovery:
        """The discover step as list_source takes it (flows/discovery.py)."""
        return self.runner.call(self.discoverer, source.name, source)
