"""What a run holds open while it syncs its sources: the store, the encoder, the embedding cache, the cursors,
the writer lock, the task runner and the progress display. Opened once per run, closed whatever happens."""
from __future__ import annotations

from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Iterator

from cairn.embedding import Encoder, encoder_for
from cairn.flows import progress as progress_display
from cairn.flows.concurrency import index_writer
from cairn.flows.options import RunOptions
from cairn.flows.progress import Progress
from cairn.flows.runner import RunnerEncoder, runner_for_run
from cairn.flows.tasks import PrefectSteps
from cairn.index.cache import EmbeddingCache
from cairn.index.state import SourceState
from cairn.index.store import MilvusStore
from cairn.schemas.config import CairnConfig


@dataclass
class RunContext:
    config: CairnConfig
    options: RunOptions
    store: MilvusStore
    encoder: Encoder
    cache: EmbeddingCache
    state: SourceState
    steps: PrefectSteps
    progress: Progress

    @classmethod
    @contextmanager
    def open(cls, config: CairnConfig, options: RunOptions) -> Iterator["RunContext"]:
        """Take the index's writer slot (flows/concurrency.py), start the task runner, open everything a sync needs; close it all after."""
        with ExitStack() as stack:
            stack.enter_context(index_writer(config.milvus, options.wait_seconds))
            runner = stack.enter_context(runner_for_run(config.runner))
            encoder = encoder_for(config.embedding)
            if runner is not None:  # [runner] kind = "dask": texts to embed go to the workers (flows/runner.py)
                encoder = RunnerEncoder.around(encoder, runner, config.runner.workers)
            cache = EmbeddingCache(config.embedding.cache_path, encoder.dim)
            stack.callback(cache.close)
            store = MilvusStore(config.milvus, encoder.dim)
            stack.callback(store.close)
            state = SourceState(config.state_path)
            stack.callback(state.close)
            display = progress_display.start()
            stack.callback(display.close)
            store.ensure_collection(embedder=encoder.identity)
            yield cls(config, options, store, encoder, cache, state, PrefectSteps(), display)
