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
    serving, build = SourceState(tmp_path / "state.sqlite"), SourceState(tmp_path / "state.sqlite", scope="cairn__g2")
    serving.put("git", {"commit": "old"})
    assert build.get("git") == {}  # a build lists everything: the serving collection's cursor is not its own
    build.put("git", {"commit": "new"})
    assert serving.get("git") == {"commit": "old"}
    serving.adopt("cairn__g2")
    assert serving.get("git") == {"commit": "new"} and build.get("git") == {}
    build.put("pd", {"mark": 1})
    serving.forget("cairn__g2")
    assert build.get("pd") == {} and serving.get("git") == {"commit": "new"}


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
