"""The query encoder's session from its cached optimised graph (embedding/session_cache.py), with the real bundled
model and onnxruntime: the same vectors bit for bit as a session optimised from the model; a cached graph that was
changed, cut short or made for another model file is never loaded, the session is built from the model and the
cache written anew."""

from __future__ import annotations

import json
import logging
import os
import shutil

import numpy as np
import pytest

from cairn.embedding.model import MODELS, _threads, bundled_files
from cairn.embedding.onnx_runtime import SentenceOnnx, Session
from cairn.embedding.session_cache import FOLDER

pytestmark = pytest.mark.slow

QUESTIONS = [
    "Represent this sentence for searching relevant passages: how do I fail over the ledger-db primary",
    "short",
    " ".join(["a much longer input that the model truncates at 256 word pieces"] * 60),
]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """The bundled bge model's files, copied where a test may change them."""
    onnx_file, tokenizer = bundled_files(MODELS["bge-small-en-v1.5"])
    folder = tmp_path_factory.mktemp("bge")
    shutil.copyfile(onnx_file, folder / "model.onnx")
    shutil.copyfile(tokenizer, folder / "tokenizer.json")
    return folder


def encoder(model, cache=None) -> SentenceOnnx:
    spec = MODELS["bge-small-en-v1.5"]
    return SentenceOnnx(
        model / "model.onnx",
        model / "tokenizer.json",
        spec.max_seq_length,
        spec.pooling,
        Session(_threads(), cache),
        True,
    )


@pytest.fixture(scope="module")
def expected(model):
    return encoder(model).encode(QUESTIONS)  # optimised from the model, nothing cached


def entries(cache):
    return sorted((cache / FOLDER).glob("*.onnx"))


def loaded_from_cache(caplog) -> bool:
    return any("loaded its optimised graph" in r.getMessage() for r in caplog.records)


def test_a_session_from_the_cached_graph_gives_the_same_vectors_bit_for_bit(tmp_path, model, expected, caplog):
    caplog.set_level(logging.DEBUG, logger="cairn.embedding")
    first = encoder(model, tmp_path / "models").encode(QUESTIONS)  # optimises, caches the graph
    assert not loaded_from_cache(caplog) and len(entries(tmp_path / "models")) == 1
    caplog.clear()
    again = encoder(model, tmp_path / "models").encode(QUESTIONS)
    assert loaded_from_cache(caplog)
    assert np.array_equal(first, expected) and np.array_equal(again, expected)


@pytest.mark.parametrize("damage", ["changed", "cut-short"])
def test_a_damaged_cached_graph_is_rebuilt_never_loaded(tmp_path, model, expected, caplog, damage):
    cache = tmp_path / "models"
    encoder(model, cache)
    (graph,) = entries(cache)
    data = graph.read_bytes()
    graph.write_bytes(data[:-4096] + bytes(4096) if damage == "changed" else data[: len(data) // 2])
    caplog.set_level(logging.DEBUG, logger="cairn.embedding")
    vectors = encoder(model, cache).encode(QUESTIONS)
    assert not loaded_from_cache(caplog) and np.array_equal(vectors, expected)
    assert "is not the file its record names" in caplog.text
    record = json.loads(graph.with_suffix(".json").read_text())
    assert graph.stat().st_size == record["bytes"] == len(data)  # written anew, whole
    caplog.clear()
    encoder(model, cache)
    assert loaded_from_cache(caplog)


def test_a_graph_cached_for_another_model_file_is_not_used(tmp_path, model, expected, caplog):
    cache = tmp_path / "models"
    encoder(model, cache)
    (stale,) = entries(cache)
    changed = tmp_path / "bge"
    shutil.copytree(model, changed)
    info = (model / "model.onnx").stat()
    os.utime(changed / "model.onnx", ns=(info.st_atime_ns, info.st_mtime_ns))
    caplog.set_level(logging.DEBUG, logger="cairn.embedding")
    encoder(changed, cache)  # another file: its own entry
    assert not loaded_from_cache(caplog) and len(entries(cache)) == 2
    os.utime(model / "model.onnx", ns=(info.st_atime_ns, info.st_mtime_ns + 10**9))  # the model file replaced
    try:
        caplog.clear()
        vectors = encoder(model, cache).encode(QUESTIONS)
        assert not loaded_from_cache(caplog) and np.array_equal(vectors, expected)
        assert stale not in entries(cache) and len(entries(cache)) == 2  # the stale entry replaced
    finally:
        os.utime(model / "model.onnx", ns=(info.st_atime_ns, info.st_mtime_ns))
