"""Per-source cursors (a git source's last commit, a PagerDuty high-water mark): a small SQLite file.

A cursor only narrows what discovery has to look at; it is never the record of what is indexed (the
collection is). Losing this file costs one full discovery, nothing else. A cursor is saved only after a
run of that source finished writing, so a killed run re-reads the same window.

Cursors belong to the collection they were saved for. The serving collection's are stored under the source's
name; a generation being built beside it (index/generations.py) keeps its own under `<generation>/<source>`,
so a rebuild starts from a full listing and resumes from what it saved itself; the switch adopts them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cairn.index.sqlite import open_or_rebuild


class SourceState:
    def __init__(self, path: str | Path, scope: str = "") -> None:
        self.path = Path(path)
        self.scope = scope  # "": the serving collection's cursors; else a generation being built
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # cursors only narrow discovery: a damaged file is rebuilt, and the next run lists everything
        self._db = open_or_rebuild(
            self.path,
            "create table if not exists cursor (source text primary key, state text not null)",
            "source state",
        )

    def _key(self, source: str) -> str:
        return f"{self.scope}/{source}" if self.scope else source

    def get(self, source: str) -> dict[str, Any]:
        """The source's cursor as its connector saved it (JSON); {} when none is saved or it cannot be read."""
        row = self._db.execute("select state from cursor where source = ?", (self._key(source),)).fetchone()
        try:
            state = json.loads(row[0]) if row else {}
        except ValueError:
            return {}  # an unreadable cursor: a full discovery instead
        return state if isinstance(state, dict) else {}

    def put(self, source: str, state: dict[str, Any]) -> None:
        self._db.execute(
            "insert into cursor (source, state) values (?, ?) on conflict(source) do update set state = excluded.state",
            (self._key(source), json.dumps(state, sort_keys=True)),
        )
        self._db.commit()

    def adopt(self, scope: str) -> None:
        """The cursors saved under `scope` (a generation that now serves) become the serving ones; the serving
        collection's old cursors go (an older cursor would only make discovery list more, never less)."""
        prefix = f"{scope}/"
        with self._db:
            rows = self._db.execute(
                "select source, state from cursor where substr(source, 1, ?) = ?", (len(prefix), prefix)
            ).fetchall()
            self._db.execute("delete from cursor where instr(source, '/') = 0")
            self._db.executemany(
                "insert into cursor (source, state) values (?, ?)",
                [(source[len(prefix) :], state) for source, state in rows],
            )
            self._db.execute("delete from cursor where substr(source, 1, ?) = ?", (len(prefix), prefix))

    def forget(self, scope: str) -> None:
        """Drop the cursors of a generation that was abandoned."""
        prefix = f"{scope}/"
        with self._db:
            self._db.execute("delete from cursor where substr(source, 1, ?) = ?", (len(prefix), prefix))

    def close(self) -> None:
        self._db.close()
