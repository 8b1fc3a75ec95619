"""The query encoder of a service that installs only `cairn[query]`: no torch, no transformers.

The ingest side (the full install) exports the collection's encoder once, `cairn export-query-model DIR`:
the model as an ONNX file (fp32 for the default torch backend: the same arithmetic to float rounding; the
int8 file for an onnx-int8 collection), its `tokenizer.json`, and `cairn-query-model.json`, which records
the encoder identity the collection was filled with. A service copies the folder (an image layer, a
volume, an object store) and points `[embedding] query_model` (or `$CAIRN_QUERY_MODEL`) at it;
`Retriever.from_config` then embeds queries with onnxruntime and the `tokenizers` library: tokenise with
truncation at the model's max_seq_length, mean-pool over the attention mask, L2-normalise, as
sentence-transformers does for this model (or take the first token's vector, for a model pooled that way,
as the manifest records). The folder also carries the configured reranker when the export asked for it
(embedding/reranker.py reads it from there). The identity comes from the manifest: against a collection filled
by another encoder, the Retriever embeds with that one if this install can run it, else refuses (query/serving.py).

The manifest holds the SHA-256 of every file of the folder (`files`), checked when the folder is loaded: a file
changed, swapped for another model's or cut short by a copy is refused with one line naming it (ConfigError),
never used to embed questions that would then be compared with vectors of another model. A folder exported
before the digests were written loads with a warning saying to export it again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from pathlib import Path

import numpy as np

from cairn.embedding.onnx_runtime import SentenceOnnx, Session
from cairn.errors import ConfigError

log = logging.getLogger("cairn.embedding")

MANIFEST = "cairn-query-model.json"
MODEL_FILE = "model.onnx"


def export_query_model(encoder, folder: Path, reranker: str | None = None) -> Path:
    """Write the query model of `encoder` (a cairn.embedding.Encoder of the full install) into `folder`, and the
    reranker named `reranker` (embedding/reranker.py RERANKERS) beside it, in folder/reranker/<name>/."""
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
    manifest = {
        "identity": encoder.identity,
        "model": spec.name,
        "backend": encoder.backend,
        "dim": encoder.dim,
        "max_seq_length": spec.max_seq_length,
        "pooling": spec.pooling,
        "query_prefix": spec.query_prefix,
    }
    if reranker:
        from cairn.embedding.reranker import export_reranker

        export_reranker(reranker, folder)
        manifest["reranker"] = reranker
    manifest["files"] = digests(folder)
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return folder


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def digests(folder: Path) -> dict[str, str]:
    """The SHA-256 of every file of `folder` but the manifest, by its path in the folder (with '/')."""
    found = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST)
    return {p.relative_to(folder).as_posix(): sha256_of(p) for p in found}


def check_files(folder: Path, manifest: dict) -> None:
    """Every file the manifest lists is in `folder` with the digest it records; ConfigError naming the first that
    is not. A manifest without digests (an export before they were written) passes, with a warning."""
    listed = manifest.get("files")
    if not isinstance(listed, dict):
        log.warning("%s records no digests of its files: they cannot be checked; export it again", folder)
        return
    for name, expected in sorted(listed.items()):
        path = folder / name
        if ".." in Path(name).parts or Path(name).is_absolute():
            raise ConfigError(f"query model {folder}: its manifest names {name!r}, outside the folder")
        if not path.is_file():
            raise ConfigError(f"query model {folder}: {name} is missing; copy the whole folder again")
        if sha256_of(path) != expected:
            raise ConfigError(
                f"query model {folder}: {name} is not the file its manifest records (SHA-256 differs): the folder "
                "was changed or copied in part; copy it again from `cairn export-query-model`"
            )


class QueryModel:
    """Sentence vectors from an exported folder: an `Encoder` (embedding/encoder.py)."""

    def __init__(self, folder: str | os.PathLike, cache: Path | None = None) -> None:
        """`cache`: the onnx cache folder where the session's optimised graph is kept (embedding/session_cache.py)."""
        self.folder = Path(folder)
        try:
            manifest = json.loads((self.folder / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise FileNotFoundError(
                f"{self.folder} holds no query model ({MANIFEST}: {exc}); make one with "
                "`cairn export-query-model DIR` where the full install runs"
            ) from None
        check_files(self.folder, manifest)
        self.identity: str = manifest["identity"]
        self.dim: int = int(manifest["dim"])
        self.query_prefix: str = manifest.get("query_prefix", "")
        self.model = SentenceOnnx(
            self.folder / MODEL_FILE,
            self.folder / "tokenizer.json",
            int(manifest["max_seq_length"]),
            manifest.get("pooling", "mean"),
            Session(max(1, min(4, os.cpu_count() or 1)), cache),
            int8=manifest.get("backend") == "onnx-int8",
        )

    def encode(self, texts: list[str], batch_size: int = 8) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self.model.encode(texts, batch_size)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """Questions, with the instruction the model was trained to see before one (if any)."""
        return self.encode([self.query_prefix + t for t in texts])
