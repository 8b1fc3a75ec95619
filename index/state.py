"""Per-source cursors (a git source's last commit, a PagerDuty high-water mark): a small SQLite file.

A cursor only narrows what discovery has to look at; it is never the record of what is indexed (the
collection is). Losing this file costs one full discovery, nothing else. A cursor is saved only after a
run of that source finished writing, so a killed run re-reads the same window.

Cursors belong to the collection they were saved for: keyed by the index (a hash of its URI and collection
name, MilvusConfig.identity: two indexes may share this file) and, within it, by scope. The serving
collection's are in scope ""; a generation being built beside it (index/generations.py) keeps its own under its
name, so a rebuild starts from a full listing and resumes from what it saved itself; the switch adopts them.
Each cursor also records how many of the source's documents the collection held when it was saved: a collection
that now holds fewer (restored from a backup, emptied, rebuilt by hand) gets no cursor, and a full listing
brings back what a cursor would have skipped. Cursors saved before cursors had an index (the `cursor` table) are
dropped: one full discovery.

Beside the cursors, what the last runs did with the documents the collection does not hold (index/outcomes.py:
skipped, failed, refused by a policy), keyed the same way. And each folder source's version memo (`versions()`,
the sources' VersionMemo): every file's stat (size, mtime_ns, ctime_ns, inode) and the version last read from
it, in a table of its own keyed like the cursors by index and scope, then by source and path. What is listed
never depends on it; keyed by index, two indexes sharing this file (each with a source of one name, over other
folders or with another PDF parser) keep their own instead of each discovery dropping the other's entries.
Losing it (the table of before it had an index, dropped like the old cursors) costs one discovery that reads
every file.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from sqlite3 import Connection
from typing import Any

from cairn.index.outcomes import TABLE as OUTCOME_TABLE
from cairn.index.outcomes import Outcomes
from cairn.index.sqlite import open_or_rebuild

Stat = tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode (sources/base.py FileStat)
_MEMO_TABLE = """create table if not exists file_version (
    index_key text not null, scope text not null, source text not null, path text not null,
    size integer not null, mtime_ns integer not null, ctime_ns integer not null, inode integer not null,
    version text not null, primary key (index_key, scope, source, path))"""


_RECIPE_TABLE = """create table if not exists recipe (
    fingerprint text primary key, parts text not null)"""
_CURSOR_TABLE = """create table if not exists source_cursor (
    index_key text not null, scope text not null, source text not null, state text not null,
    documents integer not null, mark text not null default '', primary key (index_key, scope, source))"""


class SourceState:
    def __init__(self, path: str | Path, index: str = "", scope: str = "") -> None:
        """The state in `path`: the cursors and version memos of the index whose identity is `index`
        (MilvusConfig.identity), in `scope` ("": the serving collection's; else a generation being built)."""
        self.path = Path(path)
        self.index_key = hashlib.sha256(index.encode()).hexdigest()[:16]  # never the URI itself: it may hold a user
        self.scope = scope
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # cursors only narrow discovery: a damaged file is rebuilt, and the next run lists everything
        self._db = open_or_rebuild(self.path, _CURSOR_TABLE, "source state")
        self._db.execute("drop table if exists cursor")  # cursors that named no index (see above)
        self._db.execute("drop table if exists version_memo")  # a memo that named no index: one full read
        columns = {row[1] for row in self._db.execute("pragma table_info(source_cursor)")}
        if "mark" not in columns:  # cursors saved before they recorded the collection's mark: dropped, one listing
            self._db.execute("delete from source_cursor")
            self._db.execute("alter table source_cursor add column mark text not null default ''")
        self._db.execute(_MEMO_TABLE)
        self._db.execute(OUTCOME_TABLE)
        self._db.execute(_RECIPE_TABLE)
        self._db.commit()
        self.mark: str | None = None  # the collection's mark as this run last read it (`observe`)

    def observe(self, mark: str | None) -> None:
        """The collection's mark (index/derived.py) as read with the ledger a listing is planned against: a cursor
        saved at another mark is not used (None: a store that keeps no mark; only the count is checked)."""
        self.mark = mark

    def get(self, source: str, documents: int) -> dict[str, Any]:
        """The source's cursor as its connector saved it (JSON), for a collection that holds `documents` of the
        source's documents now; {} when none is saved for this index and scope, when it cannot be read, when it
        was saved while the collection held more documents than it holds now, or when it was saved against another
        mark of the collection than the one observed (a collection restored from a backup, written by another
        writer since: its write history is not the one the cursor followed)."""
        row = self._db.execute(
            "select state, documents, mark from source_cursor where index_key = ? and scope = ? and source = ?",
            (self.index_key, self.scope, source),
        ).fetchone()
        if row is None or row[1] > documents or (self.mark is not None and row[2] != self.mark):
            return {}
        try:
            state = json.loads(row[0])
        except ValueError:
            return {}  # an unreadable cursor: a full discovery instead
        return state if isinstance(state, dict) else {}

    def put(self, source: str, state: dict[str, Any], documents: int, mark: str | None = None) -> None:
        """Save the source's cursor, with how many of its documents the collection holds now and its mark then."""
        self._db.execute(
            "insert into source_cursor (index_key, scope, source, state, documents, mark) values (?, ?, ?, ?, ?, ?)"
            " on conflict(index_key, scope, source) do update set state = excluded.state,"
            " documents = excluded.documents, mark = excluded.mark",
            (self.index_key, self.scope, source, json.dumps(state, sort_keys=True), documents, mark or ""),
        )
        self._db.commit()

    def advance(self, before: str | None, after: str | None) -> None:
        """This run's writes moved the collection's mark from `before` to `after`, holding the writer slot
        throughout: the cursors saved at `before` (other sources', followed by the same history) move with it."""
        if before is None or after is None or before == after:
            return
        with self._db:
            self._db.execute(
                "update source_cursor set mark = ? where index_key = ? and scope = ? and mark = ?",
                (after, self.index_key, self.scope, before),
            )

    def remember_recipe(self, fingerprint: str, parts: dict[str, Any]) -> None:
        """What a recipe fingerprint stands for (schemas/recipe.py recipe_parts), so that a later run can say what
        changed since rows were made by it."""
        with self._db:
            self._db.execute(
                "insert or ignore into recipe (fingerprint, parts) values (?, ?)",
                (fingerprint, json.dumps(parts, sort_keys=True)),
            )

    def recipe(self, fingerprint: str) -> dict[str, Any] | None:
        """The parts of a recipe remembered by `remember_recipe` (None: never seen here)."""
        row = self._db.execute("select parts from recipe where fingerprint = ?", (fingerprint,)).fetchone()
        return None if row is None else json.loads(row[0])

    def outcomes(self, source: str) -> Outcomes:
        """What the last runs of this index and scope did with the source's documents the collection lacks."""
        return Outcomes(self._db, self.index_key, self.scope, source)

    def versions(self, source: str) -> SavedVersions:
        """The source's version memo in this scope, loaded whole; `save()` it once discovery has listed all."""
        return SavedVersions(self._db, (self.index_key, self.scope, source))

    def adopt(self, scope: str) -> None:
        """The cursors saved under `scope` (a generation that now serves) become the serving ones; the serving
        collection's old cursors go (an older cursor would only make discovery list more, never less)."""
        with self._db:
            self._db.execute("delete from source_cursor where index_key = ? and scope = ''", (self.index_key,))
            self._db.execute(
                "update source_cursor set scope = '' where index_key = ? and scope = ?", (self.index_key, scope)
            )
            self._db.execute("delete from file_version where index_key = ? and scope = ''", (self.index_key,))
            self._db.execute(
                "update file_version set scope = '' where index_key = ? and scope = ?", (self.index_key, scope)
            )
            self._db.execute("delete from document_outcome where index_key = ? and scope = ''", (self.index_key,))
            self._db.execute(
                "update document_outcome set scope = '' where index_key = ? and scope = ?", (self.index_key, scope)
            )

    def forget(self, scope: str) -> None:
        """Drop the cursors of a generation that was abandoned."""
        with self._db:
            self._db.execute("delete from source_cursor where index_key = ? and scope = ?", (self.index_key, scope))
            self._db.execute("delete from file_version where index_key = ? and scope = ?", (self.index_key, scope))
            self._db.execute("delete from document_outcome where index_key = ? and scope = ?", (self.index_key, scope))

    def drop_source(self, source: str) -> None:
        """Forget everything kept for `source` in this index, every scope: its cursors, version memo and outcomes
        (its rows were dropped: `cairn drop`)."""
        with self._db:
            for table in ("source_cursor", "file_version", "document_outcome"):
                self._db.execute(f"delete from {table} where index_key = ? and source = ?", (self.index_key, source))

    def close(self) -> None:
        self._db.close()


class SavedVersions:
    """One source's version memo (sources/base.py VersionMemo) as the state file keeps it: read whole when
    discovery starts, written in one transaction by `save()` when it has listed everything. A file not seen by
    that discovery (gone, now unreadable, or changed and not yet remembered) loses its entry."""

    def __init__(self, db: Connection, key: tuple[str, str, str]) -> None:
        """`key`: (index key, scope, source)."""
        self._db, self._key = db, key
        rows = db.execute(
            "select path, size, mtime_ns, ctime_ns, inode, version from file_version"
            " where index_key = ? and scope = ? and source = ?",
            self._key,
        )
        self._known: dict[str, tuple[Stat, str]] = {
            path: ((size, mtime, ctime, inode), version) for path, size, mtime, ctime, inode, version in rows
        }
        self._seen: set[str] = set()
        self._new: dict[str, tuple[Stat, str]] = {}

    def get(self, locator: str, stat: Stat) -> str | None:
        known = self._known.get(locator)
        if known is None or known[0] != tuple(stat):
            return None
        self._seen.add(locator)
        return known[1]

    def put(self, locator: str, stat: Stat, version: str) -> None:
        self._new[locator] = (stat, version)

    def save(self) -> None:
        """Write what this discovery read and drop what it did not see (once per discovery, after it listed all);
        nothing is written when nothing moved."""
        gone = [(*self._key, path) for path in self._known.keys() - self._seen - self._new.keys()]
        new = [(*self._key, path, *stat, version) for path, (stat, version) in self._new.items()]
        if not gone and not new:
            return
        with self._db:
            self._db.executemany(
                "delete from file_version where index_key = ? and scope = ? and source = ? and path = ?", gone
            )
            self._db.executemany(
                "insert or replace into file_version"
                " (index_key, scope, source, path, size, mtime_ns, ctime_ns, inode, version)"
                " values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                new,
            )
