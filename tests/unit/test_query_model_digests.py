"""An exported query-model folder records the SHA-256 of every file, and a folder whose files differ is refused
with one line when it is loaded (issue #51: MiniLM's files under bge's genuine manifest answered with unrelated
top hits, silently)."""

from __future__ import annotations

import json
import logging

import pytest

from cairn.embedding.query_model import MANIFEST, QueryModel, check_files, digests
from cairn.errors import ConfigError


def folder_with_files(tmp_path):
    folder = tmp_path / "query-model"
    (folder / "reranker" / "ms-marco").mkdir(parents=True)
    (folder / "model.onnx").write_bytes(b"bge weights" * 1000)
    (folder / "tokenizer.json").write_text('{"model": "bge"}')
    (folder / "reranker" / "ms-marco" / "model.onnx").write_bytes(b"reranker")
    manifest = {"identity": "bge-small-en-v1.5", "dim": 384, "max_seq_length": 512, "files": digests(folder)}
    (folder / MANIFEST).write_text(json.dumps(manifest))
    return folder, manifest


def test_the_manifest_lists_every_file_but_itself(tmp_path):
    folder, manifest = folder_with_files(tmp_path)
    assert sorted(manifest["files"]) == ["model.onnx", "reranker/ms-marco/model.onnx", "tokenizer.json"]
    assert all(len(d) == 64 for d in manifest["files"].values())
    check_files(folder, manifest)  # as exported: nothing to say


@pytest.mark.parametrize(
    "tamper, named",
    [
        (lambda f: (f / "model.onnx").write_bytes(b"minilm weights"), "model.onnx is not the file"),
        (lambda f: (f / "tokenizer.json").unlink(), "tokenizer.json is missing"),
        (lambda f: (f / "reranker" / "ms-marco" / "model.onnx").write_bytes(b"reranke"), "reranker/ms-marco/model"),
    ],
)
def test_a_changed_or_missing_file_is_refused_at_load_with_one_line(tmp_path, tamper, named):
    folder, _ = folder_with_files(tmp_path)
    tamper(folder)
    with pytest.raises(ConfigError, match=named) as refused:
        QueryModel(folder)  # before any model is loaded from it
    assert "\n" not in str(refused.value)


def test_a_manifest_naming_a_file_outside_the_folder_is_refused(tmp_path):
    folder, manifest = folder_with_files(tmp_path)
    with pytest.raises(ConfigError, match="outside the folder"):
        check_files(folder, {**manifest, "files": {"../secret": "0" * 64}})


def test_an_export_from_before_the_digests_loads_with_a_warning(tmp_path, caplog):
    folder, manifest = folder_with_files(tmp_path)
    del manifest["files"]
    with caplog.at_level(logging.WARNING, logger="cairn.embedding"):
        check_files(folder, manifest)
    assert "records no digests" in caplog.text
