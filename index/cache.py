"""A persistent embedding cache keyed by (model identity, sha256 of the exact input text).

Embedding is the pipeline's bottleneck by two orders of magnitude, so a text is embedded once per
model, ever: an edited page re-embeds only the chunks whose text changed. SQLite in WAL mode; a
killed run loses at most the batch it had not committed, which is simply embedded again.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from cairn.index.sqlite import open_or_rebuild

_SCHEMA = "CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)"


def text_key(model_identity: str, text: str) -> str:
    return hashlib.sha256(f"{model_identity}\x1f{text}".encode()).hexdigest()


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
        return int(self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])

    def close(self) -> None:
        self._db.close()
