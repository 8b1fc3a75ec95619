"""Per-source cursors (a git source's last commit, a PagerDuty high-water mark): a small SQLite file.

A cursor only narrows what discovery has to look at; it is never the record of what is indexed (the
collection is). Losing this file costs one full discovery, nothing else. A cursor is saved only after a
run of that source finished writing, so a killed run re-reads the same window.
"""
from __future__ import annotations

import json
from pathlib import Path

from cairn.index.cache import open_or_rebuild


class SourceState:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # cursors only narrow discovery: a damaged file is rebuilt, and the next run lists everything
        self._db = open_or_rebuild(self.path, "create table if not exists cursor (source text primary key, state text not null)",
                                   "source state")

    def get(self, source: str) -> dict:
        row = self._db.execute("select state from cursor where source = ?", (source,)).fetchone()
        try:
            state = json.loads(row[0]) if row else {}
        except ValueError:
            return {}  # an unreadable cursor: a full discovery instead
        return state if isinstance(state, dict) else {}

    def put(self, source: str, state: dict) -> None:
        self._db.execute(
            "insert into cursor (source, state) values (?, ?) on conflict(source) do update set state = excluded.state",
            (source, json.dumps(state, sort_keys=True)),
        )
        self._db.commit()

    def close(self) -> None:
        self._db.close()
