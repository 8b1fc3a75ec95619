"""The pure parts of a reindex: generation names, cursors kept per generation, encoders rebuilt from the identity a
collection records. The rebuild itself, against Milvus Lite and Prefect: tests/integration/test_reindex.py."""

from __future__ import annotations

import pytest

from cairn.embedding import encoder_for_identity, load_encoder
from cairn.index.generations import generation_name, generation_number
from cairn.index.state import SourceState


def test_generations_are_numbered_after_the_configured_name_and_nothing_else_counts():
    assert generation_name("cairn", 12) == "cairn__g12"
    assert generation_number("cairn", "cairn__g12") == 12
    for other in ("cairn", "cairnx__g1", "cairn__g1x", "other__g1", "cairn__g"):
        assert generation_number("cairn", other) is None


def test_a_build_keeps_its_own_cursors_until_the_switch_adopts_them(tmp_path):
    path, index = tmp_path / "state.sqlite", "/srv/index/cairn.db\0cairn"
    serving, build = SourceState(path, index), SourceState(path, index, scope="cairn__g2")
    serving.put("git", {"commit": "old"}, documents=3)
    assert build.get("git", 3) == {}  # a build lists everything: the serving collection's cursor is not its own
    build.put("git", {"commit": "new"}, documents=3)
    assert serving.get("git", 3) == {"commit": "old"}
    serving.adopt("cairn__g2")
    assert serving.get("git", 3) == {"commit": "new"} and build.get("git", 3) == {}
    build.put("pd", {"mark": 1}, documents=1)
    serving.forget("cairn__g2")
    assert build.get("pd", 1) == {} and serving.get("git", 3) == {"commit": "new"}


def test_a_cursor_belongs_to_its_index_and_to_a_collection_holding_what_it_held(tmp_path):
    path = tmp_path / "state.sqlite"
    lite, server = SourceState(path, "/srv/index/cairn.db\0cairn"), SourceState(path, "http://milvus:19530\0cairn")
    lite.put("pd", {"high_water": "2025-11-14T03:41:52Z"}, documents=60)
    assert server.get("pd", 0) == {} and server.get("pd", 60) == {}  # another index: its own listing
    assert lite.get("pd", 60) == lite.get("pd", 61) == {"high_water": "2025-11-14T03:41:52Z"}
    assert lite.get("pd", 59) == {} and lite.get("pd", 0) == {}  # fewer than it held: restored, emptied
    lite.close()
    server.close()
    kept = b"".join(f.read_bytes() for f in tmp_path.glob("state.sqlite*"))
    assert b"pd" in kept and b"milvus:19530" not in kept and b"/srv/index" not in kept  # keyed by a hash of the URI


def test_the_encoder_a_collection_records_is_rebuilt_from_its_identity():
    for backend in ("torch", "onnx-int8"):
        encoder = load_encoder("all-MiniLM-L6-v2", backend)
        assert encoder_for_identity(encoder.identity) is encoder  # the weights load on first use only
    for unknown in (
        "all-MiniLM-L6-v2/seq512/d384",
        "other/seq256/d384",
        "all-MiniLM-L6-v2/seq256/d384/fp16",
        "all-MiniLM-L6-v2/seq256/d384/onnx-int8/x",
    ):
        with pytest.raises(ValueError, match="not one this install can run"):
            encoder_for_identity(unknown)
