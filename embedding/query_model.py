"""The query encoder of a service that installs only `cairn[query]`: no torch, no transformers.

The ingest side (the full install) exports the collection's encoder once, `cairn export-query-model DIR`:
the model as an ONNX file (fp32 for the default torch backend: the same arithmetic to float rounding; the
int8 file for an onnx-int8 collection), its `tokenizer.json`, and `cairn-query-model.json`, which records
the encoder identity the collection was filled with. A service copies the folder (an image layer, a
volume, an object store) and points `[embedding] query_model` (or `$CAIRN_QUERY_MODEL`) at it;
`Retriever.from_config` then embeds queries with onnxruntime and the `tokenizers` library: tokenise with
truncation at the model's max_seq_length, mean-pool over the attention mask, L2-normalise, as
sentence-transformers does for this model (or take the first token's vector, for a model pooled that way,
as the manifest records). The identity comes from the manifest: against a collection filled
by another encoder, the Retriever embeds with that one if this install can run it, else refuses (query/serving.py).
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np

MANIFEST = "cairn-query-model.json"
MODEL_FILE = "model.onnx"
INPUTS = ("input_ids", "attention_mask", "token_type_ids")  # the exported graph's inputs (embedding/onnx.py)
_ENCODING_FIELDS = ("ids", "attention_mask", "type_ids")  # the same, as a `tokenizers` Encoding names them


def cpu_session(path: Path, threads: int):
    """An onnxruntime session on the CPU with `threads` for each operator, quiet."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


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

    def __init__(self, onnx_path: Path, tokenizer_path: Path, max_seq_length: int, pooling: str, threads: int,
                 int8: bool = False) -> None:
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self.tokenizer.enable_truncation(max_length=max_seq_length)
        self.tokenizer.enable_padding(pad_id=self.tokenizer.token_to_id("[PAD]") or 0, pad_token="[PAD]")
        self.session = cpu_session(onnx_path, threads)
        self.inputs = [(name, field) for name, field in zip(INPUTS, _ENCODING_FIELDS)
                       if name in {i.name for i in self.session.get_inputs()}]
        self.pooling, self.path, self.int8 = pooling, Path(onnx_path), int8

    def encode(self, texts: list[str], batch_size: int = 32, **_: object) -> np.ndarray:
        batch_size = 1 if self.int8 else batch_size
        order = np.argsort([-len(t) for t in texts], kind="stable")  # similar lengths share a batch
        out = np.empty((len(texts), 0), dtype=np.float32)
        for start in range(0, len(texts), batch_size):
            rows = order[start : start + batch_size]
            encodings = self.tokenizer.encode_batch([texts[i] for i in rows])
            feed = {name: np.array([getattr(e, field) for e in encodings], dtype=np.int64) for name, field in self.inputs}
            vectors = pooled(self.session.run(None, feed)[0], feed["attention_mask"], self.pooling)
            if out.shape[1] == 0:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[rows] = vectors
        return out


def export_query_model(encoder, folder: Path) -> Path:
    """Write the query model of `encoder` (a cairn.embedding.Encoder of the full install) into `folder`."""
    from cairn.embedding.model import _model_dir, bundled_files
    from cairn.embedding.onnx import check_pooling, export_fp32, export_int8

    spec = encoder.spec
    folder.mkdir(parents=True, exist_ok=True)
    if spec.bundled:  # the package ships the ONNX file itself
        onnx_file, tokenizer = bundled_files(spec)
        shutil.copyfile(onnx_file, folder / MODEL_FILE)
    else:
        model_dir = _model_dir(spec)
        check_pooling(model_dir)
        if encoder.backend == "onnx-int8":
            shutil.copyfile(export_int8(model_dir, Path(encoder.onnx_cache), spec.name), folder / MODEL_FILE)
        else:
            export_fp32(model_dir, folder / MODEL_FILE)
        tokenizer = model_dir / "tokenizer.json"
    shutil.copyfile(tokenizer, folder / "tokenizer.json")
    manifest = {"identity": encoder.identity, "model": spec.name, "backend": encoder.backend, "dim": encoder.dim,
                "max_seq_length": spec.max_seq_length, "pooling": spec.pooling, "query_prefix": spec.query_prefix}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return folder


class QueryModel:
    """Sentence vectors from an exported folder; `identity`, `dim`, `encode` and `encode_queries` as
    cairn.embedding.Encoder."""

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)
        try:
            manifest = json.loads((self.folder / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise FileNotFoundError(f"{self.folder} holds no query model ({MANIFEST}: {exc}); make one with "
                                    "`cairn export-query-model DIR` where the full install runs") from None
        self.identity: str = manifest["identity"]
        self.dim: int = int(manifest["dim"])
        self.query_prefix: str = manifest.get("query_prefix", "")
        self.model = SentenceOnnx(self.folder / MODEL_FILE, self.folder / "tokenizer.json", int(manifest["max_seq_length"]),
                                  manifest.get("pooling", "mean"), max(1, min(4, os.cpu_count() or 1)),
                                  int8=manifest.get("backend") == "onnx-int8")

    def encode(self, texts: list[str], batch_size: int = 8) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self.model.encode(texts, batch_size)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """Questions, with the instruction the model was trained to see before one (if any)."""
        return self.encode([self.query_prefix + t for t in texts])
