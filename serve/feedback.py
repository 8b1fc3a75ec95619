"""What callers said about what they were served: the rows behind `sparse_recall_hit_rate` and
`sparse_recall_false_positive_rate` (retrieval spec, rule 3).

Every answer `cairn serve` gives is recorded by its query id: one row per returned section (its chunk id, the
caller's name, whether the short-document guarantee injected it). `POST /v1/feedback` marks one such row useful
or not; only the caller that was served the section can mark it, and only while the row is kept
(`[serve] feedback_keep_days`, and at most MAX_ROWS rows, the newest). Over the rows marked in that window:

    sparse_recall_hit_rate            = injected sections marked useful / injected sections marked
    sparse_recall_false_positive_rate = injected sections marked not useful / injected sections marked

(the two add up to 1 when any injected section was marked; neither exists before one is). One SQLite file
shared by every worker process (WAL), beside the cursors unless `[serve] feedback_path` says otherwise.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from cairn.index.sqlite import open_or_rebuild

SCHEMA = """CREATE TABLE IF NOT EXISTS served (
    query_id TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    caller TEXT NOT NULL,
    injected INTEGER NOT NULL,
    at REAL NOT NULL,
    useful INTEGER,
    PRIMARY KEY (query_id, chunk_id)
) WITHOUT ROWID"""
MARKED_INDEX = "CREATE INDEX IF NOT EXISTS served_marked ON served (injected, useful) WHERE useful IS NOT NULL"
AGE_INDEX = "CREATE INDEX IF NOT EXISTS served_at ON served (at)"
PRUNE_EVERY = 500  # answers recorded between two prunings
MAX_ROWS = 1_000_000  # returned sections kept at most (the oldest go first): about 100 MB of SQLite


class FeedbackStore:
    def __init__(self, path: Path, keep_days: float) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = open_or_rebuild(path, SCHEMA, "feedback store", check_same_thread=False)
        self._db.execute("PRAGMA synchronous=NORMAL")  # WAL: a crash may lose the last answers' rows, never corrupt
        self._db.execute(MARKED_INDEX)
        self._db.execute(AGE_INDEX)
        self._db.commit()
        self._keep_seconds = keep_days * 86400
        self._lock = threading.Lock()
        self._recorded = 0
        self.prune()

    def record(self, query_id: str, caller: str, sections: Iterable[tuple[str, bool]]) -> None:
        """One answer: (chunk id, recall-injected) per returned section."""
        now = time.time()
        rows = [(query_id, chunk_id, caller, int(injected), now) for chunk_id, injected in sections]
        if not rows:
            return
        with self._lock:
            self._db.executemany(
                "INSERT OR IGNORE INTO served (query_id, chunk_id, caller, injected, at) VALUES (?, ?, ?, ?, ?)", rows
            )
            self._db.commit()
            self._recorded += 1
            if self._recorded % PRUNE_EVERY == 0:
                self._prune_locked()

    def mark(self, query_id: str, chunk_id: str, caller: str, useful: bool) -> bool | None:
        """Mark a served section useful or not. None when this caller was never served it (or it aged out);
        else whether it was a recall-injected section. A second mark replaces the first."""
        with self._lock:
            row = self._db.execute(
                "SELECT injected FROM served WHERE query_id = ? AND chunk_id = ? AND caller = ? AND at >= ?",
                (query_id, chunk_id, caller, time.time() - self._keep_seconds),
            ).fetchone()
            if row is None:
                return None
            self._db.execute(
                "UPDATE served SET useful = ? WHERE query_id = ? AND chunk_id = ?", (int(useful), query_id, chunk_id)
            )
            self._db.commit()
        return bool(row[0])

    def rates(self) -> dict[str, float]:
        """The feedback rates over the window: `sparse_recall_hit_rate` and `sparse_recall_false_positive_rate`
        (absent until an injected section is marked), `useful_rate` over every marked section (absent until one
        is), and the marked counts."""
        with self._lock:
            counts = self._db.execute(
                "SELECT injected, useful, count(*) FROM served WHERE useful IS NOT NULL AND at >= ? "
                "GROUP BY injected, useful",
                (time.time() - self._keep_seconds,),
            ).fetchall()
        by = {(bool(i), bool(u)): n for i, u, n in counts}
        injected = by.get((True, True), 0) + by.get((True, False), 0)
        marked = sum(by.values())
        figures = {"marked": float(marked), "injected_marked": float(injected)}
        if injected:
            figures["sparse_recall_hit_rate"] = by.get((True, True), 0) / injected
            figures["sparse_recall_false_positive_rate"] = by.get((True, False), 0) / injected
        if marked:
            figures["useful_rate"] = (by.get((True, True), 0) + by.get((False, True), 0)) / marked
        return figures

    def prune(self) -> None:
        with self._lock:
            self._prune_locked()

    def _prune_locked(self) -> None:
        """Rows older than the window go, then the oldest beyond MAX_ROWS."""
        try:
            self._db.execute("DELETE FROM served WHERE at < ?", (time.time() - self._keep_seconds,))
            self._db.execute(
                "DELETE FROM served WHERE at < (SELECT at FROM served ORDER BY at DESC LIMIT 1 OFFSET ?)", (MAX_ROWS,)
            )
            self._db.commit()
        except sqlite3.OperationalError:  # another worker holds the write lock past the timeout: next time
            pass

    def close(self) -> None:
        with self._lock:
            self._db.close()
