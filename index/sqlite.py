"""SQLite files Cairn can rebuild (the embedding cache, the source cursors, the derived ledgers): opened,
checked, and set aside when damaged, so that one bad file never fails every later run.

Set aside, never lost: a damaged file moves to `<name>.damaged` (`.damaged.1`, ... when that is taken). A text
file (no SQLite header, text where it should be: a configuration, notes) at a path the configuration names is
not Cairn's: it is refused, untouched, with the path in the message (a state_path that named the configuration
file replaced it). Binary bytes without the header (zeros after a crash, a torn write) are damage as before.

What is checked at open costs nothing that grows with the file (these files reach hundreds of MB at 100k pages,
and a full `PRAGMA quick_check` read all of it, in every process that opened one: most of `cairn status`): the
header, the size the header gives against the file's, and the schema. A file small enough is checked in full
(FULL_CHECK_BYTES). Damage deeper in a large file shows when SQLite reads it: the connection (`_Watched`) then
leaves a `<name>.suspect` mark beside it and raises, and the next open checks that file in full, so a damaged
file fails one run, not every later one."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cairn.errors import ConfigError

log = logging.getLogger(__name__)
HEADER = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file
FULL_CHECK_BYTES = 16 * 2**20  # a file up to this size is checked in full at every open (milliseconds)
DAMAGE_CODES = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}


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
    db = sqlite3.connect(path, timeout=60, check_same_thread=check_same_thread, factory=_Watched)
    suspect = _suspect(path)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(schema)
        _check_size(path)
        if suspect.exists() or path.stat().st_size <= FULL_CHECK_BYTES:
            if db.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise sqlite3.DatabaseError("quick_check failed")
        db.commit()
    except sqlite3.DatabaseError:
        db.close()
        raise
    suspect.unlink(missing_ok=True)
    return db


def _suspect(path: Path) -> Path:
    return path.with_name(path.name + ".suspect")


def _check_size(path: Path) -> None:
    """A file shorter than the pages its header counts was cut short (the count is valid only while the change
    counter at offset 24 equals the one at 92; else SQLite sizes the file itself, and so do we)."""
    with path.open("rb") as handle:
        head = handle.read(100)
    if len(head) < 100:
        return  # a new, empty file: SQLite writes the header with the first page
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(head[28:32], "big")
    if pages and head[24:28] == head[92:96] and path.stat().st_size < pages * page_size:
        raise sqlite3.DatabaseError(f"file cut short: {path.stat().st_size} bytes, the header counts {pages} pages")


class _Watched(sqlite3.Connection):
    """A connection that marks its file suspect when SQLite finds it damaged mid-use (module doc)."""

    def cursor(self, factory: Any = None) -> Any:
        return super().cursor(factory or _WatchedCursor)

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> Any:
        return self.cursor().executemany(sql, parameters)

    def executescript(self, script: str, /) -> Any:
        return self.cursor().executescript(script)


class _WatchedCursor(sqlite3.Cursor):
    def execute(self, *args: Any) -> Any:
        return _watched(self, super().execute, *args)

    def executemany(self, *args: Any) -> Any:
        return _watched(self, super().executemany, *args)

    def executescript(self, *args: Any) -> Any:
        return _watched(self, super().executescript, *args)

    def fetchone(self) -> Any:
        return _watched(self, super().fetchone)

    def fetchmany(self, *args: Any) -> Any:
        return _watched(self, super().fetchmany, *args)

    def fetchall(self) -> Any:
        return _watched(self, super().fetchall)

    def __next__(self) -> Any:
        return _watched(self, super().__next__)


def _watched(cursor: sqlite3.Cursor, call: Callable[..., Any], *args: Any) -> Any:
    try:
        return call(*args)
    except sqlite3.DatabaseError as exc:
        if getattr(exc, "sqlite_errorcode", None) in DAMAGE_CODES:
            name = cursor.connection.execute("PRAGMA database_list").fetchone()[2]
            if name:
                _suspect(Path(name)).touch()
                log.error("%s is damaged (%s): it is checked in full, and set aside if so, at its next open", name, exc)
        raise
