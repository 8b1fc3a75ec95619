"""The task runner a run uses, from `[runner]` in the config, and the one task sent to Dask workers.

    thread (default): Prefect's thread pool. Ingest runs in the flow process one batch after the other
        (parse+chunk -> embed -> write); torch already uses every core, so threads add nothing there.
    dask: embedding, the bottleneck by two orders of magnitude, goes to Dask workers. For each batch the
        flow process reads the documents, chunks them, looks every text up in the embedding cache, and sends
        only the texts the cache lacks, cut into `workers` slices, as `encode_texts` tasks. A task carries a
        model *name*, a list of strings and an int: the worker loads the model itself (once per worker
        process, `embedding.load_encoder` is cached) and returns float32 vectors. Sources (which may hold
        boto3 clients, a PagerDuty token, a git mirror), the SQLite embedding cache and the Milvus writer
        never leave the flow process, so a run keeps one writer, its crash safety and its cursors; only
        the model's work scales out.

A flow started by the CLI gets the runner as its own (`configured(ingest_flow, config)`, i.e.
`ingest_flow.with_options(task_runner=...)`); a flow started otherwise (a deployment's worker, plain
Python) with a config saying dask opens the configured runner for the length of the run
(`runner_for_run`), so the config decides either way.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
from prefect import Flow, task
from prefect.cache_policies import NO_CACHE
from prefect.context import FlowRunContext
from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner

import cairn.flows  # noqa: F401  (Prefect defaults before Prefect is imported)
from cairn.embedding import ModelEncoder, load_encoder
from cairn.embedding.model import BATCH_SIZE, DEFAULT_ONNX_CACHE
from cairn.schemas.config import CairnConfig, RunnerConfig


@task(name="encode-texts", cache_policy=NO_CACHE)
def encode_texts(
    model: str,
    texts: list[str],
    batch_size: int = BATCH_SIZE,
    backend: str = "torch",
    onnx_cache: str = DEFAULT_ONNX_CACHE,
) -> np.ndarray:
    """Vectors for `texts`, computed where this task runs: the model is loaded there by name, never pickled."""
    return load_encoder(model, backend, onnx_cache).encode(texts, batch_size=batch_size)


def dask_runner(config: RunnerConfig) -> TaskRunner:
    from prefect_dask import DaskTaskRunner

    if config.address:
        return DaskTaskRunner(address=config.address)
    kwargs: dict[str, object] = {
        "n_workers": config.workers,
        "threads_per_worker": config.threads_per_worker,
        "processes": config.processes,
        "dashboard_address": None,  # no web dashboard (and no bokeh) on a batch worker
    }
    if config.processes:
        # worker processes listen on loopback only, and share the cores instead of each taking all of them
        threads = max(1, (os.cpu_count() or 1) // config.workers)
        kwargs.update(host="127.0.0.1", env={"CAIRN_TORCH_THREADS": str(threads), "OMP_NUM_THREADS": str(threads)})
    return DaskTaskRunner(cluster_class="distributed.LocalCluster", cluster_kwargs=kwargs)


def task_runner(config: RunnerConfig) -> TaskRunner:
    """A fresh (not yet started) Prefect task runner for `[runner]`."""
    if config.kind == "dask":
        return dask_runner(config)
    return ThreadPoolTaskRunner(max_workers=config.workers)


def configured(flow: Flow, config: CairnConfig) -> Flow:
    """The flow with the config's task runner as its own."""
    return flow.with_options(task_runner=task_runner(config.runner))


def _is_dask(runner: TaskRunner) -> bool:
    return type(runner).__name__ == "DaskTaskRunner"


@contextmanager
def runner_for_run(config: RunnerConfig) -> Iterator[TaskRunner]:
    """The started Dask runner the model work of a run goes to ([runner] kind = "dask").

    A Dask runner the flow already runs on (the CLI path) is used as is; otherwise one is started for the
    run and shut down after it (the local cluster with it)."""
    context = FlowRunContext.get()
    current = context.task_runner if context is not None else None
    if current is not None and _is_dask(current):
        yield current
        return
    with dask_runner(config) as runner:
        yield runner


@dataclass
class RunnerEncoder(ModelEncoder):
    """An Encoder whose encode() runs as `encode_texts` tasks on a task runner, in up to `parts` slices.

    It is the encoder it wraps (same model, backend, identity and dimension), so the embedding cache keys stay
    the same whichever runner computed a vector; only where the forward passes run differs."""

    runner: TaskRunner = field(kw_only=True, repr=False)  # ModelEncoder's fields have defaults: keyword-only
    parts: int = 1

    @classmethod
    def around(cls, encoder: ModelEncoder, runner: TaskRunner, parts: int) -> RunnerEncoder:
        return cls(encoder.spec, encoder.backend, encoder.onnx_cache, runner=runner, parts=max(1, parts))

    @property
    def loaded(self) -> bool:
        return False  # the model lives in the workers

    def encode(self, texts: list[str], batch_size: int = BATCH_SIZE) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = min(self.parts, math.ceil(len(texts) / batch_size))  # no slice smaller than a model batch
        size = math.ceil(len(texts) / parts)
        futures = [
            self.runner.submit(
                encode_texts,
                {
                    "model": self.spec.name,
                    "texts": texts[i : i + size],
                    "batch_size": batch_size,
                    "backend": self.backend,
                    "onnx_cache": self.onnx_cache,
                },
            )
            for i in range(0, len(texts), size)
        ]
        vectors = np.concatenate([np.asarray(f.result(), dtype=np.float32) for f in futures])
        if vectors.shape != (len(texts), self.dim):
            raise RuntimeError(f"encode-texts returned {vectors.shape}, expected {(len(texts), self.dim)}")
        return vectors
