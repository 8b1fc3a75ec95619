"""A persistent embedding cache keyed by (model identity, sha256 of the exact input text).

Embedding is the pipeline's bottleneck by two orders of magnitude, so a text is embedded once per
model, ever: an edited page re-embeds only the chunks whose text changed. SQLite in WAL mode; a
killed run loses at most the batch it had not committed, which is simply embedded again.
"""
from __future__ import annotations

import hashlib
import logging
import sqlite3
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)


_SCHEMA = "CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)"


def open_or_rebuild(path: Path, schema: str, what: str, check_same_thread: bool = True) -> sqlite3.Connection:
    """An SQLite file Cairn can rebuild (a cache, cursors): opened and checked; when damaged, moved aside to
    `<name>.damaged` with a warning and started afresh, so one bad file never fails every later run."""
    try:
        return _open(path, schema, check_same_thread)
    except sqlite3.DatabaseError as exc:
        aside = path.with_name(path.name + ".damaged")
        log.warning("%s %s cannot be read (%s): moved to %s and rebuilt", what, path, exc, aside.name)
        for suffix in ("-wal", "-shm"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)
        path.replace(aside)
        return _open(path, schema, check_same_thread)


def _open(path: Path, schema: str, check_same_thread: bool) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=60, check_same_thread=check_same_thread)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(schema)
        if db.execute("PRAGMA quick_check").fetchone()[0] != "ok":
            raise sqlite3.DatabaseError("quick_check failed")
        db.commit()
    except sqlite3.DatabaseError:
        db.close()
        raise
    return db


def text_key(model_identity: str, text: str) -> str:
    return hashlib.sha256(f"{model_identity}\x1f{text}".encode("utf-8")).hexdigest()


class EmbeddingCache:
    """A cache, not a record: a file that cannot be read (truncated, overwritten, not SQLite) is moved aside
    with a warning and an empty cache takes its place; what it held is simply embedded again."""

    def __init__(self, path: str | Path, dim: int) -> None:
        self.path = Path(path)
        self.dim = dim
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = open_or_rebuild(self.path, _SCHEMA, "embedding cache", check_same_thread=False)

    def get_many(self, keys: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):
            part = unique[start : start + 500]
            marks = ",".join("?" * len(part))
            for key, blob in self._db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})", part):
                vector = np.frombuffer(blob, dtype=np.float32)
                if vector.shape == (self.dim,):
                    found[key] = vector
        return found

    def put_many(self, items: dict[str, np.ndarray]) -> None:
        self._db.executemany(
            "INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)",
            [(key, np.asarray(vec, dtype=np.float32).tobytes()) for key, vec in items.items()],
        )
        self._db.commit()

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]

    def close(self) -> None:
        self._db.close()
