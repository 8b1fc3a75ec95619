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

discover = task(plan.discover, name="discover", cache_policy=NO_CACHE)
parse_and_chunk = task(steps.parse_and_chunk, name="parse-and-chunk", cache_policy=NO_CACHE)
embed = task(steps.embed, name="embed", cache_policy=NO_CACHE)
write = task(steps.write, name="write", cache_policy=NO_CACHE)
retire_stale = task(steps.retire_stale, name="retire-stale", cache_policy=NO_CACHE)


class PrefectSteps:
    """Each ingest step as a task of the running flow."""

    def discover(self, source: Source) -> Discovery:
        return discover(source)

    def chunk(self, source: Source, refs: list[DocumentRef], chunking: ChunkingConfig, skip: Skip | None) -> Chunked:
        return parse_and_chunk(source, refs, chunking, unvisited(skip))

    def embed(self, documents: list[ChunkedDocument], encoder: Encoder, cache: EmbeddingCache,
              batch_size: int) -> tuple[list[dict], EmbedStats]:
        if isinstance(encoder, RunnerEncoder):
            return steps.embed(documents, encoder, cache, batch_size)
        return embed(unvisited(documents), encoder, cache, batch_size)

    def write_in_context(self, store: MilvusStore, batch: WriteBatch) -> Callable[[], Written]:
        """The write as a callable for another thread, bound to this flow run's context."""
        context = copy_context()
        return lambda: context.run(write, store, unvisited(batch))

    def retire_stale(self, store: MilvusStore, document_ids: list[str], history: bool) -> int:
        return retire_stale(store, document_ids, history)
