"""The query encoder of a service that installs only `cairn[query]`: no torch, no transformers.

The ingest side (the full install) exports the collection's encoder once, `cairn export-query-model DIR`:
the model as an ONNX file (fp32 for the default torch backend: the same arithmetic to float rounding; the
int8 file for an onnx-int8 collection), its `tokenizer.json`, and `cairn-query-model.json`, which records
the encoder identity the collection was filled with. A service copies the folder (an image layer, a
volume, an object store) and points `[embedding] query_model` (or `$CAIRN_QUERY_MODEL`) at it;
`Retriever.from_config` then embeds queries with onnxruntime and the `tokenizers` library: tokenise with
truncation at the model's max_seq_length, mean-pool over the attention mask, L2-normalise, as
sentence-transformers does for this model. The identity comes from the manifest: against a collection filled
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


def mean_pooled(hidden: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """Sentence vectors as sentence-transformers makes them for this model: the token vectors averaged over
    the attention mask, then L2-normalised."""
    mask = attention_mask[..., None].astype(np.float32)
    pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
    return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)


def export_query_model(encoder, folder: Path) -> Path:
    """Write the query model of `encoder` (a cairn.embedding.Encoder of the full install) into `folder`."""
    from cairn.embedding.model import _model_dir
    from cairn.embedding.onnx import check_pooling, export_fp32, export_int8

    model_dir = _model_dir(encoder.spec)
    check_pooling(model_dir)
    folder.mkdir(parents=True, exist_ok=True)
    if encoder.backend == "onnx-int8":
        shutil.copyfile(export_int8(model_dir, Path(encoder.onnx_cache), encoder.spec.name), folder / MODEL_FILE)
    else:
        export_fp32(model_dir, folder / MODEL_FILE)
    shutil.copyfile(model_dir / "tokenizer.json", folder / "tokenizer.json")
    manifest = {"identity": encoder.identity, "model": encoder.spec.name, "backend": encoder.backend,
                "dim": encoder.dim, "max_seq_length": encoder.spec.max_seq_length}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return folder


class QueryModel:
    """Sentence vectors from an exported folder; `identity`, `dim` and `encode` as cairn.embedding.Encoder."""

    def __init__(self, folder: str | os.PathLike) -> None:
        from tokenizers import Tokenizer

        self.folder = Path(folder)
        try:
            manifest = json.loads((self.folder / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise FileNotFoundError(f"{self.folder} holds no query model ({MANIFEST}: {exc}); make one with "
                                    "`cairn export-query-model DIR` where the full install runs") from None
        self.identity: str = manifest["identity"]
        self.dim: int = int(manifest["dim"])
        self.tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=int(manifest["max_seq_length"]))
        self.tokenizer.enable_padding(pad_id=self.tokenizer.token_to_id("[PAD]") or 0, pad_token="[PAD]")
        self.session = cpu_session(self.folder / MODEL_FILE, max(1, min(4, os.cpu_count() or 1)))

    def encode(self, texts: list[str], batch_size: int = 8) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), batch_size):
            encodings = self.tokenizer.encode_batch(texts[start : start + batch_size])
            feed = {name: np.array([getattr(e, field) for e in encodings], dtype=np.int64)
                    for name, field in zip(INPUTS, _ENCODING_FIELDS)}
            hidden = self.session.run(None, feed)[0]
            out[start : start + len(encodings)] = mean_pooled(hidden, feed["attention_mask"])
        return out
