"""The cache of optimised ONNX graphs (embedding/session_cache.py) as files: what it trusts, what it refuses, where
it writes. The sessions themselves (the same vectors from a cached graph, a refused one rebuilt): tests/integration/
test_session_cache.py."""

from __future__ import annotations

import json
import os

import pytest

from cairn.embedding.session_cache import (
    FOLDER,
    cache_folder,
    entry_name,
    read_trusted,
    source_record,
    write_entry,
)

GRAPH = b"an optimised graph, as onnxruntime wrote it" * 100


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "models" / "model.onnx"
    path.parent.mkdir()
    path.write_bytes(b"the model's own file")
    return path


def cached(folder, source, graph: bytes = GRAPH):
    """An entry written as cached_session writes one: (its name, its record)."""
    record = source_record(source, "1.0")
    family, name = entry_name(record)
    written = folder / ".graph-scratch.onnx"
    written.write_bytes(graph)
    write_entry(folder, family, name, record, written)
    return name, record


def test_an_entry_is_trusted_for_its_model_file_runtime_and_bytes(tmp_path, source):
    (tmp_path / "index").mkdir()
    folder = cache_folder(tmp_path / "index" / "models")
    assert folder == tmp_path / "index" / "models" / FOLDER and folder.is_dir()
    name, record = cached(folder, source)
    assert read_trusted(folder, name, record) == GRAPH
    manifest = json.loads((folder / f"{name}.json").read_text())
    assert manifest["bytes"] == len(GRAPH) and len(manifest["sha256"]) == 64
    assert not list(folder.glob(".graph-*")) and not list(folder.glob(".record-*"))  # moved into place


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: p.write_bytes(GRAPH[:-1] + b"?"),  # changed, same size
        lambda p: p.write_bytes(GRAPH[: len(GRAPH) // 2]),  # cut short
        lambda p: p.write_bytes(b""),
        lambda p: p.unlink(),
    ],
    ids=["changed", "cut-short", "empty", "missing"],
)
def test_a_cached_graph_whose_bytes_are_not_its_records_is_never_trusted(tmp_path, source, damage):
    folder = cache_folder(tmp_path)
    name, record = cached(folder, source)
    damage(folder / f"{name}.onnx")
    assert read_trusted(folder, name, record) is None


def test_a_damaged_or_missing_record_is_not_trusted(tmp_path, source):
    folder = cache_folder(tmp_path)
    name, record = cached(folder, source)
    (folder / f"{name}.json").write_text("{not json")
    assert read_trusted(folder, name, record) is None
    (folder / f"{name}.json").unlink()
    assert read_trusted(folder, name, record) is None


def test_a_changed_model_or_runtime_is_another_entry_and_replaces_the_stale_one(tmp_path, source):
    folder = cache_folder(tmp_path)
    old_name, old_record = cached(folder, source)
    os.utime(source, ns=(0, old_record["mtime_ns"] + 10**9))  # the model file changed (a package upgrade)
    record = source_record(source, "1.0")
    assert entry_name(record)[1] != old_name
    assert read_trusted(folder, old_name, record) is None  # an entry answers only for what it records
    assert entry_name(source_record(source, "2.0"))[1] != entry_name(record)[1]  # another onnxruntime
    name, _ = cached(folder, source)
    assert sorted(p.name for p in folder.iterdir()) == [f"{name}.json", f"{name}.onnx"]  # the stale one removed


def test_entries_of_other_model_files_are_kept(tmp_path, source):
    folder = cache_folder(tmp_path)
    other = source.with_name("other.onnx")
    other.write_bytes(b"another model")
    first, _ = cached(folder, source)
    second, _ = cached(folder, other)
    assert {p.stem for p in folder.iterdir()} == {first, second}


def test_a_linked_cached_graph_is_not_trusted(tmp_path, source):
    folder = cache_folder(tmp_path)
    name, record = cached(folder, source)
    elsewhere = tmp_path / "elsewhere.onnx"
    (folder / f"{name}.onnx").rename(elsewhere)
    (folder / f"{name}.onnx").symlink_to(elsewhere)
    assert read_trusted(folder, name, record) is None


def test_the_cache_folder_is_a_directory_of_its_own_in_a_folder_that_exists(tmp_path):
    assert cache_folder(tmp_path / "no-such-index" / "models") is None  # a default path: nothing created
    assert not (tmp_path / "no-such-index").exists()
    outside = tmp_path / "outside"
    outside.mkdir()
    models = tmp_path / "models"
    models.mkdir()
    (models / FOLDER).symlink_to(outside)
    assert cache_folder(models) is None
    (models / FOLDER).unlink()
    (models / FOLDER).write_text("a file")
    assert cache_folder(models) is None


def test_a_cache_that_cannot_be_made_caches_nothing(tmp_path):
    models = tmp_path / "models"
    models.write_text("a file where the cache folder would be")
    assert cache_folder(models) is None
