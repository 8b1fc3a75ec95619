"""What callers said about what they were served: the rows behind `sparse_recall_hit_rate` and
`sparse_recall_false_positive_rate` (retrieval spec, rule 3).

Every answer `cairn serve` gives is recorded by its query id: one row per returned section (its chunk id, the
caller's name, whether the short-document guarantee injected it). `POST /v1/feedback` marks one such row useful
or not; only the caller that was served the section can mark it, and only while the row is kept
(`[serve] feedback_keep_days`, and while the file is within MAX_BYTES, the newest). Over the rows marked and kept:

    sparse_recall_hit_rate            = injected sections marked useful / injected sections marked
    sparse_recall_false_positive_rate = injected sections marked not useful / injected sections marked

(the two add up to 1 when any injected section was marked; neither exists before one is). One SQLite file
shared by every worker process (WAL), beside the cursors unless `[serve] feedback_path` says otherwise.

What a scrape costs does not grow with the file: the marked counts are kept as running counts (`marks`, at most
one row per hour of the window and kind), moved by SQLite triggers in the same transaction as the mark, the
replaced mark or the pruned row, so every worker's writes keep them exact. A scrape sums those rows through a
connection of its own, never taking the lock `record()` and `mark()` hold. The file is bounded by bytes:
beyond MAX_BYTES of live pages the oldest rows go (about 270,000 returned sections); rows older than the window
go at least every PRUNE_SECONDS while answers are recorded.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from cairn.index.sqlite import open_or_rebuild

log = logging.getLogger("cairn.serve")
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
# The marked counts by the hour the section was served in and (injected, useful), kept by the triggers below: a
# scrape sums at most one row per hour of the window and kind (672 for 7 days), not the file.
COUNTS = """CREATE TABLE marks (hour INTEGER NOT NULL, injected INTEGER NOT NULL, useful INTEGER NOT NULL,
    n INTEGER NOT NULL, PRIMARY KEY (hour, injected, useful)) WITHOUT ROWID"""
HOUR = 3600
TRIGGERS = (
    """CREATE TRIGGER IF NOT EXISTS marks_unmarked AFTER UPDATE OF useful ON served WHEN old.useful IS NOT NULL
    BEGIN
        UPDATE marks SET n = n - 1
        WHERE hour = CAST(old.at / 3600 AS INTEGER) AND injected = old.injected AND useful = old.useful;
    END""",
    """CREATE TRIGGER IF NOT EXISTS marks_marked AFTER UPDATE OF useful ON served WHEN new.useful IS NOT NULL
    BEGIN
        INSERT INTO marks (hour, injected, useful, n)
        VALUES (CAST(new.at / 3600 AS INTEGER), new.injected, new.useful, 1)
        ON CONFLICT (hour, injected, useful) DO UPDATE SET n = n + 1;
    END""",
    """CREATE TRIGGER IF NOT EXISTS marks_deleted AFTER DELETE ON served WHEN old.useful IS NOT NULL BEGIN
        UPDATE marks SET n = n - 1
        WHERE hour = CAST(old.at / 3600 AS INTEGER) AND injected = old.injected AND useful = old.useful;
    END""",
)
PRUNE_EVERY = 500  # answers recorded between two prunings
PRUNE_SECONDS = 600.0  # and at least this often while answers are recorded (the window's old marks leave the rates)
MAX_BYTES = 100 * 2**20  # live pages of the file at most; beyond, the oldest rows go (to PRUNE_TO of it)
PRUNE_TO = 0.9


class FeedbackStore:
    def __init__(self, path: Path, keep_days: float) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = open_or_rebuild(path, SCHEMA, "feedback store", check_same_thread=False)
        self._db.execute("PRAGMA synchronous=NORMAL")  # WAL: a crash may lose the last answers' rows, never corrupt
        self._db.execute(MARKED_INDEX)
        self._db.execute(AGE_INDEX)
        self._db.commit()
        self._counts()
        self._keep_seconds = keep_days * 86400
        self._lock = threading.Lock()  # record(), mark(), prune(): the answer path's
        # the scrape's own connection and lock: reading the counts never waits for the answer path's lock (WAL
        # readers do not wait for the writer either)
        self._reader = sqlite3.connect(path, check_same_thread=False, timeout=5.0)
        self._reader_lock = threading.Lock()
        self._recorded = 0
        self._pruned_at = 0.0
        self.prune()

    def _counts(self) -> None:
        """The running counts and their triggers; a file from before them gets its counts once, from its rows
        (in one immediate transaction: of several workers opening it at once, one counts)."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'marks'").fetchone() is None:
                db.execute(COUNTS)
                db.execute(
                    "INSERT INTO marks (hour, injected, useful, n) SELECT CAST(at / 3600 AS INTEGER), injected, "
                    "useful, count(*) FROM served WHERE useful IS NOT NULL GROUP BY 1, 2, 3"
                )
            for trigger in TRIGGERS:
                db.execute(trigger)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

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
            if self._recorded % PRUNE_EVERY == 0 or now - self._pruned_at >= PRUNE_SECONDS:
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
        """The feedback rates over the window (to the hour): `sparse_recall_hit_rate` and
        `sparse_recall_false_positive_rate` (absent until an injected section is marked), `useful_rate` over every
        marked section (absent until one is), and the marked counts. At most a row per hour and kind read,
        whatever the file holds; never the answer path's lock."""
        first_hour = -(-(time.time() - self._keep_seconds) // HOUR)  # the first whole hour inside the window
        with self._reader_lock:
            counts = self._reader.execute(
                "SELECT injected, useful, sum(n) FROM marks WHERE hour >= ? GROUP BY injected, useful", (first_hour,)
            ).fetchall()
        by = {(bool(i), bool(u)): max(0, n) for i, u, n in counts}
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
        """Rows older than the window go, then the oldest while the file's live pages are over MAX_BYTES."""
        self._pruned_at = time.time()
        try:
            cutoff = time.time() - self._keep_seconds
            self._db.execute("DELETE FROM served WHERE at < ?", (cutoff,))
            self._db.execute("DELETE FROM marks WHERE hour < ? OR n <= 0", (cutoff // HOUR,))
            self._db.commit()
            live = self.live_bytes()
            if live > MAX_BYTES:
                rows = self._db.execute("SELECT count(*) FROM served").fetchone()[0]
                excess = int(rows * (1 - PRUNE_TO * MAX_BYTES / live))
                self._db.execute(  # exactly the `excess` oldest (rows of one answer share their time)
                    "DELETE FROM served WHERE (query_id, chunk_id) IN "
                    "(SELECT query_id, chunk_id FROM served ORDER BY at LIMIT ?)",
                    (excess,),
                )
                self._db.commit()
                log.info("feedback store over %d MB: its %d oldest rows removed", MAX_BYTES // 2**20, excess)
        except sqlite3.OperationalError:  # another worker holds the write lock past the timeout: next time
            pass

    def live_bytes(self) -> int:
        """The bytes of the file's pages in use (freed pages are reused before the file grows)."""
        size = self._db.execute("PRAGMA page_size").fetchone()[0]
        pages = self._db.execute("PRAGMA page_count").fetchone()[0]
        free = self._db.execute("PRAGMA freelist_count").fetchone()[0]
        return int((pages - free) * size)

    def close(self) -> None:
        with self._reader_lock:
            self._reader.close()
        with self._lock:
            self._db.close()
