"""The ingest steps as Prefect tasks: the one place where the orchestration meets Prefect.

`PrefectSteps` is what flows/sync.py drives; each method runs one step of flows/steps.py as a task of the
current flow run. Prefect's quirks are handled here and nowhere else:

- Large arguments (documents, rows with their vectors, the ledger) go in Prefect's `quote`: Prefect would
  otherwise walk every element (each row's 2 x 384 floats) looking for futures: 17% of a first ingest.
- A write runs in the writer thread (flows/writer.py) inside this flow run's context, as Prefect's own
  runner does, so it is recorded as a task of the run.
- On Dask the embed step runs as the flow's own code, so that its encode-texts tasks are submitted from the
  flow run: a task submitted from inside a task carries its parent's parameters (the cache, the documents)
  to the worker with it.
"""
from __future__ import annotations

from contextvars import copy_context
from typing import Callable

import cairn.flows  # noqa: F401  (Prefect defaults before Prefect is imported)
from prefect import task
from prefect.cache_policies import NO_CACHE
from prefect.utilities.annotations import quote as unvisited

from cairn.embedding import Encoder
from cairn.errors import Fault, fault_of
from cairn.flows import plan, steps
from cairn.flows.runner import RunnerEncoder
from cairn.flows.plan import Discovery
from cairn.flows.steps import Chunked, Skip, WriteBatch, Written
from cairn.index.cache import EmbeddingCache
from cairn.index.rows import ChunkedDocument, EmbedStats
from cairn.index.store import MilvusStore
from cairn.schemas import DocumentRef
from cairn.schemas.config import ChunkingConfig
from cairn.sources import Source

WRITE_RETRY_DELAYS = [1, 4]  # seconds before the 2nd and 3rd attempt of a write the store refused as a whole


def transient(task, task_run, state) -> bool:
    """Retry what the store raised (a server restarting, a timeout), never what fails the same way every time:
    bad input, an unusable configuration (cairn.errors.fault_of)."""
    exc = state.data if isinstance(state.data, BaseException) else state.result(raise_on_failure=False)
    return isinstance(exc, BaseException) and fault_of(exc) is Fault.TRANSIENT


discover = task(plan.discover, name="discover", cache_policy=NO_CACHE)
parse_and_chunk = task(steps.parse_and_chunk, name="parse-and-chunk", cache_policy=NO_CACHE)
embed = task(steps.embed, name="embed", cache_policy=NO_CACHE)
# Writes are idempotent (upserts by deterministic id, deletes by id or version), so a retry is safe.
write = task(steps.write, name="write", cache_policy=NO_CACHE, retries=len(WRITE_RETRY_DELAYS),
             retry_delay_seconds=WRITE_RETRY_DELAYS, retry_condition_fn=transient)
retire_stale = task(steps.retire_stale, name="retire-stale", cache_policy=NO_CACHE, retries=len(WRITE_RETRY_DELAYS),
                    retry_delay_seconds=WRITE_RETRY_DELAYS, retry_condition_fn=transient)


class PrefectSteps:
    """Each ingest step as a task of the running flow; a task run is named after its source and batch
    (`parse-and-chunk wiki 3/12`), so a run's timeline says what each task worked on."""

    def discover(self, source: Source) -> Discovery:
        return discover.with_options(task_run_name=f"discover {source.name}")(source)

    def chunk(self, source: Source, refs: list[DocumentRef], chunking: ChunkingConfig, skip: Skip | None,
              label: str = "") -> Chunked:
        return parse_and_chunk.with_options(task_run_name=f"parse-and-chunk {label}")(source, refs, chunking, unvisited(skip))

    def embed(self, documents: list[ChunkedDocument], encoder: Encoder, cache: EmbeddingCache,
              batch_size: int, label: str = "") -> tuple[list[dict], EmbedStats]:
        if isinstance(encoder, RunnerEncoder):
            return steps.embed(documents, encoder, cache, batch_size)
        return embed.with_options(task_run_name=f"embed {label}")(unvisited(documents), encoder, cache, batch_size)

    def write_in_context(self, store: MilvusStore, batch: WriteBatch, label: str = "") -> Callable[[], Written]:
        """The write as a callable for another thread, bound to this flow run's context."""
        context, named = copy_context(), write.with_options(task_run_name=f"write {label}")
        return lambda: context.run(named, store, unvisited(batch))

    def retire_stale(self, store: MilvusStore, document_ids: list[str], history: bool, label: str = "") -> int:
        return retire_stale.with_options(task_run_name=f"retire-stale {label}")(store, document_ids, history)
