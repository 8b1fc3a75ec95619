"""The ONNX runner both sides share: an onnxruntime session on the CPU, the model's tokenizer.json, pooling.

The ingest side runs it for the onnx-int8 backend and the bundled bge file (embedding/model.py); a `cairn[query]`
service runs it inside QueryModel (embedding/query_model.py). onnxruntime and `tokenizers` only: no torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

INPUTS = ("input_ids", "attention_mask", "token_type_ids")  # the exported graph's inputs (embedding/onnx.py)
_ENCODING_FIELDS = ("ids", "attention_mask", "type_ids")  # the same, as a `tokenizers` Encoding names them


def cpu_session(path: Path, threads: int, cache: Path | None = None):
    """An onnxruntime session on the CPU with `threads` for each operator, quiet. With `cache` (the onnx cache
    folder), its optimised graph is kept there and loaded by the next session (embedding/session_cache.py)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    providers = ["CPUExecutionProvider"]
    if cache is not None:
        from cairn.embedding.session_cache import cached_session

        return cached_session(ort, Path(path), options, Path(cache), providers)
    return ort.InferenceSession(str(path), options, providers=providers)


@dataclass(frozen=True)
class Session:
    """How a model's onnxruntime session runs: `threads` for each operator, and the onnx cache folder its optimised
    graph is kept in (None: not kept)."""

    threads: int
    cache: Path | None = None


def pooled(hidden: np.ndarray, attention_mask: np.ndarray, pooling: str = "mean") -> np.ndarray:
    """Sentence vectors as the model's own recipe makes them, L2-normalised: "mean" averages the token vectors
    over the attention mask (all-MiniLM-L6-v2, as sentence-transformers does), "cls" takes the first token's
    (bge-small-en-v1.5)."""
    if pooling == "cls":
        vectors = hidden[:, 0].astype(np.float32)
    else:
        mask = attention_mask[..., None].astype(np.float32)
        vectors = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
    return vectors / np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)


class SentenceOnnx:
    """Sentence vectors from an ONNX transformer and its `tokenizer.json`: tokenise with truncation at
    max_seq_length, run in batches of similar length (less padding), pool, L2-normalise.

    An int8 model (`int8=True`) runs one text at a time: its dynamic quantisation takes one activation scale
    over the whole batch, so in a batch a text's vector would depend on the texts beside it (cosine 0.995 to
    its own alone, measured on bge-small-en-v1.5), and the embedding cache would keep whichever came first.
    On a CPU that costs nothing: one text per run embedded at least as many texts a second as batches of 8
    or 32 (measured on SciFact abstracts)."""

    def __init__(
        self,
        onnx_path: Path,
        tokenizer_path: Path,
        max_seq_length: int,
        pooling: str,
        session: Session,
        int8: bool = False,
    ) -> None:
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self.tokenizer.enable_truncation(max_length=max_seq_length)
        self.tokenizer.enable_padding(pad_id=self.tokenizer.token_to_id("[PAD]") or 0, pad_token="[PAD]")
        self.session = cpu_session(onnx_path, session.threads, session.cache)
        self.inputs = [
            (name, field)
            for name, field in zip(INPUTS, _ENCODING_FIELDS)
            if name in {i.name for i in self.session.get_inputs()}
        ]
        self.pooling, self.path, self.int8 = pooling, Path(onnx_path), int8

    def encode(self, texts: list[str], batch_size: int = 32, **_: object) -> np.ndarray:
        batch_size = 1 if self.int8 else batch_size
        order = np.argsort([-len(t) for t in texts], kind="stable")  # similar lengths share a batch
        out = np.empty((len(texts), 0), dtype=np.float32)
        for start in range(0, len(texts), batch_size):
            rows = order[start : start + batch_size]
            encodings = self.tokenizer.encode_batch([texts[i] for i in rows])
            feed = {
                name: np.array([getattr(e, field) for e in encodings], dtype=np.int64) for name, field in self.inputs
            }
            vectors = pooled(self.session.run(None, feed)[0], feed["attention_mask"], self.pooling)
            if out.shape[1] == 0:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[rows] = vectors
        return out
