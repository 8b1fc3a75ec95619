"""What the last runs did with the documents a collection does not hold: skipped (nothing to index in them),
failed (the reason), or refused by a policy (an ACL wider than the source grants; a removal held back by the
mass-delete guard). A table of the state file (index/state.py), keyed like the cursors by index and scope.

A source's sync writes its documents' outcomes when it ends (flows/sync.py): a document indexed or removed loses
its entry, one the source no longer lists is forgotten. Two readers:

- the plan (flows/discovery.py): a document skipped at the version the source still lists is not read again, so
  an unchanged re-run stays a no-op; a new version is read (a page that got content is indexed);
- `cairn reconcile`: why a document the source lists is not in the collection (flows/reconcile.py).

Like the cursors, this only saves work and explains: losing it costs one re-read of the skipped documents.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from sqlite3 import Connection
from typing import Literal

OutcomeKind = Literal["skipped", "failed", "refused"]

TABLE = """create table if not exists document_outcome (
    index_key text not null, scope text not null, source text not null, document_id text not null,
    locator text not null, version text not null, outcome text not null, reason text not null,
    access text not null, at integer not null, primary key (index_key, scope, source, document_id))"""


@dataclass(frozen=True)
class Outcome:
    """What a run did with one document (at `version`, under the source's access settings `access`)."""

    document_id: str
    locator: str
    version: str  # "" for a removal held back (the source no longer lists the document)
    kind: OutcomeKind
    reason: str
    access: str = ""
    at: int = 0  # epoch seconds


class Outcomes:
    """One source's outcomes in one index and scope."""

    def __init__(self, db: Connection, index_key: str, scope: str, source: str) -> None:
        self._db, self._key = db, (index_key, scope, source)
        self.source = source

    def all(self) -> dict[str, Outcome]:
        rows = self._db.execute(
            "select document_id, locator, version, outcome, reason, access, at from document_outcome"
            " where index_key = ? and scope = ? and source = ?",
            self._key,
        )
        return {row[0]: Outcome(*row) for row in rows}

    def skipped(self) -> dict[str, Outcome]:
        """The documents skipped as holding nothing to index, by id."""
        return {doc: outcome for doc, outcome in self.all().items() if outcome.kind == "skipped"}

    def settle(self, recorded: Iterable[Outcome], cleared: Iterable[str], keep: set[str] | None = None) -> None:
        """In one transaction: the `recorded` outcomes saved (over earlier ones), the `cleared` documents' dropped
        (indexed, removed), and with `keep` every other document's not in it (the source no longer lists it)."""
        now = int(time.time())
        with self._db:
            self._db.executemany(
                "delete from document_outcome where index_key = ? and scope = ? and source = ? and document_id = ?",
                [(*self._key, doc) for doc in cleared],
            )
            if keep is not None:
                gone = set(self.all()) - keep
                self._db.executemany(
                    "delete from document_outcome where index_key = ? and scope = ? and source = ? and document_id = ?",
                    [(*self._key, doc) for doc in gone],
                )
            self._db.executemany(
                "insert or replace into document_outcome (index_key, scope, source, document_id, locator, version,"
                " outcome, reason, access, at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (*self._key, o.document_id, o.locator, o.version, o.kind, o.reason, o.access, o.at or now)
                    for o in recorded
                ],
            )
