"""SQLite files Cairn can rebuild (the embedding cache, the source cursors, the derived ledgers): opened,
checked, and set aside when damaged, so that one bad file never fails every later run.

Set aside, never lost: a damaged file moves to `<name>.damaged` (`.damaged.1`, ... when that is taken). A text
file (no SQLite header, text where it should be: a configuration, notes) at a path the configuration names is
not Cairn's: it is refused, untouched, with the path in the message (a state_path that named the configuration
file replaced it). Binary bytes without the header (zeros after a crash, a torn write) are damage as before."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from cairn.errors import ConfigError

log = logging.getLogger(__name__)
HEADER = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file


def open_or_rebuild(
    path: Path, schema: str, what: str, check_same_thread: bool = True, own_folder: bool = False
) -> sqlite3.Connection:
    """An SQLite file Cairn can rebuild: opened and checked; when damaged, moved aside with a warning and started
    afresh. A text file there is refused (ConfigError) unless `own_folder` (the path is in a folder only Cairn
    writes, like the derived ledgers'): then it is damage like any other."""
    if path.is_dir() or not own_folder:
        _refuse_foreign(path, what)
    try:
        return _open(path, schema, check_same_thread)
    except sqlite3.DatabaseError as exc:
        aside = _unused(path.with_name(path.name + ".damaged"))
        log.warning("%s %s cannot be read (%s): moved to %s and rebuilt", what, path, exc, aside.name)
        for suffix in ("-wal", "-shm"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)
        path.replace(aside)
        return _open(path, schema, check_same_thread)


def _refuse_foreign(path: Path, what: str) -> None:
    try:
        with path.open("rb") as handle:
            head = handle.read(512)
    except FileNotFoundError:
        return  # created below
    except IsADirectoryError:
        raise ConfigError(f"{what} {path} is a folder: it needs the path of a file") from None
    if head and not head.startswith(HEADER) and _text(head):
        raise ConfigError(
            f"{what} {path} exists and is a text file, not one Cairn wrote: it was left as it is; point the"
            " configuration elsewhere, or move the file away"
        )


def _text(head: bytes) -> bool:
    """Whether these first bytes read as text (UTF-8, no NUL; the last character may be cut short)."""
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3  # only a character cut at the end
    return True


def _unused(path: Path) -> Path:
    """`path`, or the first of `path.1`, `path.2`, ... that does not exist: an earlier copy is never overwritten."""
    candidate, n = path, 0
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.{n}")
    return candidate


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
