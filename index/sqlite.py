"""SQLite files Cairn can rebuild (the embedding cache, the source cursors): opened, checked, and set aside when
damaged, so that one bad file never fails every later run."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

log = logging.getLogger(__name__)


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
