"""index.cache and index.state are rebuildable: a damaged file is moved aside with a warning, never a traceback
on every later run."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from cairn.errors import ConfigError
from cairn.index.cache import EmbeddingCache
from cairn.index.state import SourceState


def _damage(path, how: str) -> None:
    if how == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 3])
    else:
        path.write_bytes(b"\x00" * 4096 + bytes(range(256)) * 16)  # zeros, then binary bytes: a torn write


@pytest.mark.parametrize("how", ["truncated", "garbage"])
def test_a_damaged_embedding_cache_is_set_aside_and_rebuilt(tmp_path, caplog, how):
    path = tmp_path / "embeddings.sqlite"
    cache = EmbeddingCache(path, dim=4)
    cache.put_many({f"k{i}": np.ones(4, dtype=np.float32) * i for i in range(500)})
    cache._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    cache.close()
    _damage(path, how)
    with caplog.at_level(logging.WARNING):
        again = EmbeddingCache(path, dim=4)
    assert "cannot be read" in caplog.text and (tmp_path / "embeddings.sqlite.damaged").exists()
    assert len(again) == 0 and again.get_many(["k1"]) == {}
    again.put_many({"k1": np.ones(4, dtype=np.float32)})
    assert set(again.get_many(["k1"])) == {"k1"}
    again.close()


def test_a_damaged_state_file_gives_empty_cursors_not_an_error(tmp_path, caplog):
    path = tmp_path / "state.sqlite"
    state = SourceState(path)
    state.put("git", {"commit": "abc"}, documents=1)
    state.close()
    _damage(path, "garbage")
    with caplog.at_level(logging.WARNING):
        again = SourceState(path)
    assert again.get("git", 1) == {} and "source state" in caplog.text
    again.put("git", {"commit": "def"}, documents=1)
    assert again.get("git", 1) == {"commit": "def"}
    again.close()


def test_a_file_that_is_not_cairns_is_refused_untouched_and_damaged_copies_are_never_overwritten(tmp_path):
    config = tmp_path / "cairn.toml"
    config.write_text('[milvus]\nuri = "index/cairn.db"\n')
    with pytest.raises(ConfigError, match=r"source state .*cairn.toml exists and is a text file, not one Cairn wrote"):
        SourceState(config)  # state_path naming the configuration, or any file of the operator's
    with pytest.raises(ConfigError, match=r"embedding cache .* is a folder"):
        EmbeddingCache(tmp_path, dim=4)
    assert config.read_text() == '[milvus]\nuri = "index/cairn.db"\n' and not list(tmp_path.glob("*.damaged*"))

    path = tmp_path / "state.sqlite"
    for _ in range(3):
        SourceState(path).close()
        _damage(path, "garbage")
        SourceState(path).close()  # set aside and rebuilt
    kept = sorted(p.name for p in tmp_path.glob("state.sqlite.damaged*"))
    assert kept == ["state.sqlite.damaged", "state.sqlite.damaged.1", "state.sqlite.damaged.2"]


def test_a_large_file_is_opened_without_reading_it_whole_and_damage_found_in_use_is_set_aside_at_the_next_open(
    tmp_path, caplog, monkeypatch
):
    import sqlite3

    from cairn.index import sqlite as rebuildable

    monkeypatch.setattr(rebuildable, "FULL_CHECK_BYTES", 0)  # every file "large": no full check at open
    path = tmp_path / "embeddings.sqlite"
    cache = EmbeddingCache(path, dim=64)
    cache.put_many({f"k{i}": np.ones(64, dtype=np.float32) * i for i in range(2000)})
    cache._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    cache.close()
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    middle = len(data) // page // 2 * page
    data[middle : middle + page] = bytes(range(256)) * (page // 256)  # one page in the middle: garbage
    path.write_bytes(bytes(data))

    damaged = EmbeddingCache(path, dim=64)  # opens: the header and the size are right
    with pytest.raises(sqlite3.DatabaseError), caplog.at_level(logging.ERROR):
        damaged.get_many([f"k{i}" for i in range(2000)])  # reading every vector meets the damaged page
    damaged.close()
    assert path.with_name("embeddings.sqlite.suspect").exists() and "checked in full" in caplog.text
    again = EmbeddingCache(path, dim=64)  # checked in full now: set aside and rebuilt
    assert len(again) == 0 and (tmp_path / "embeddings.sqlite.damaged").exists()
    assert not path.with_name("embeddings.sqlite.suspect").exists()
    again.close()


def test_a_file_cut_short_is_found_at_open_without_reading_it_whole(tmp_path, caplog, monkeypatch):
    from cairn.index import sqlite as rebuildable

    monkeypatch.setattr(rebuildable, "FULL_CHECK_BYTES", 0)
    path = tmp_path / "state.sqlite"
    state = SourceState(path)
    for n in range(30):  # about 60 KB, in few commits (each one waits for the disk)
        state.put(f"source-{n}", {"commit": "x" * 2000}, documents=1)
    state._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    state.close()
    _damage(path, "truncated")
    with caplog.at_level(logging.WARNING):
        again = SourceState(path)
    assert "cannot be read" in caplog.text and again.get("source-1", 1) == {}
    assert (tmp_path / "state.sqlite.damaged").exists() and not (tmp_path / "state.sqlite.suspect").exists()
    again.close()
