"""The derived ledger: what one collection holds, row by row, in a SQLite file beside the cursors, so that a
run, `cairn status` and `cairn report` read a file instead of scanning the collection.

The collection stays the record; this is a copy the writer keeps in step and anyone can throw away. One file per
collection: per Milvus URI and physical collection (a generation, index/generations.py), named by both. It holds
every row's ledger entry (index/ledger.py LedgerEntry), whether it is current, its tenant, and its quality
figures (schemas/row_figures.py). Never a vector, never text.

When it can be trusted. The collection carries a mark (the property `cairn.ledger_mark`), and so does the file:
- a writer's first write of a run clears the collection's mark, before any row changes (`MilvusStore._begin`);
- each write is recorded here once Milvus took it;
- once the writes are flushed, a new mark goes on the collection, then into the file (`MilvusStore.flush`).
The file is in step exactly when both marks are equal and not empty. A run killed anywhere, a writer without
this file (another state folder, an older Cairn, a test's MilvusStore), a collection restored from a backup, or
dropped and made again: each leaves the marks different, and the next writer rebuilds the file from the
collection (one scan, what every run cost before). A damaged or unreadable file is set aside and rebuilt the
same way. Only a write that bypasses Cairn altogether (pymilvus on the collection directly) goes unseen:
`cairn reconcile --scan` compares the file with the collection and `--fix` rebuilds it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cairn.closing import Closing
from cairn.index.ledger import IndexedDocument, LedgerEntry, read_rows
from cairn.index.reader import CollectionReader
from cairn.index.sqlite import open_or_rebuild
from cairn.schemas import ChunkType
from cairn.schemas.config import MilvusConfig
from cairn.schemas.row_figures import FIGURE_FIELDS, figures
from cairn.schemas.row_links import DocumentStamp
from cairn.schemas.rows import ChunkRow

MARK_PROPERTY = "cairn.ledger_mark"
UNSEALED = "writing"  # the collection's mark while a writer is at work: never a file's
# what a row of the file holds; a file of another format is rebuilt (2: check outcomes; 3: `access` holds the
# stamp key, DocumentStamp.key, and `recipe` the recipe apart)
FORMAT = "3"
# What a rebuild reads of every row: the ledger's fields and the figures', never a vector.
SCAN_FIELDS = list(dict.fromkeys(["chunk_id", "is_current", *FIGURE_FIELDS]))
# A row written again (its figures may differ: an ACL change keeps the ids) loses its check outcomes: replaced whole.
_INSERT = (
    "insert or replace into chunk (chunk_id, source, document_id, tenant, chunk_type, is_current, version,"
    " parent_chunk_id, sections, children, access, content_type, stamp, token_count, abstract_tokens, health,"
    " recipe) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_FIGURES = "insert or replace into figure (chunk_id, figures) values (?, ?)"
# Each row's figures (about 1.5 KB) in a table of their own: every pass over `chunk` (a run's ledger, status, a
# report's counts) reads some 150 bytes a row, not all of them (a pass read the whole file: 0.5 GB at 100k pages).
_SCHEMA = """
create table if not exists chunk (
    chunk_id text primary key, source text not null, document_id text not null, tenant text not null,
    chunk_type text not null, is_current integer not null, version text not null, parent_chunk_id text not null,
    sections integer not null, children integer not null, access text not null,
    content_type text not null, stamp text not null, token_count integer, abstract_tokens integer, health real,
    checks text, checked integer, failed integer, recipe text not null default '');
create table if not exists figure (chunk_id text primary key, figures text not null);
create index if not exists chunk_source on chunk (source, is_current);
create index if not exists chunk_document on chunk (document_id);
create index if not exists chunk_kind on chunk (tenant, source, chunk_type);
"""


@dataclass(frozen=True)
class Rows:
    """Which current rows a read of the derived ledger takes: of one source, one tenant, a set of documents."""

    source: str | None = None
    tenant: str | None = None
    documents: Iterable[str] | None = None


# A source's ledger read by the no-op check, for the flow run after it (DerivedLedger.hand_on): (file, source, mark).
_handed: dict[tuple[str, str, str], dict[str, IndexedDocument]] = {}


def ledger_file(folder: Path, config: MilvusConfig) -> Path:
    """The file of the collection `config.collection` (a physical one) at `config.uri`."""
    key = hashlib.sha256(config.identity.encode()).hexdigest()[:16]
    return folder / f"{config.collection}-{key}.sqlite"


def new_mark() -> str:
    return uuid.uuid4().hex


class DerivedLedger(Closing):
    """The derived ledger of one physical collection (module doc). Opened by the run that writes it
    (flows/context.py) and by readers (`cairn status`, `cairn report`), who use it only when `in_step`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        # the writer's thread records writes (flows/writer.py); one lock keeps every use of the file in turn
        meta = "create table if not exists meta (key text primary key, value text)"
        self._db = open_or_rebuild(path, meta, "ledger", check_same_thread=False, own_folder=True)
        self._lock = threading.RLock()
        if self._meta("format") != FORMAT:  # another format's rows (and columns) are dropped: rebuilt untrusted
            with self._db:
                self._set("mark", "")
                self._db.execute("drop table if exists chunk")
                self._db.execute("drop table if exists figure")
            self._db.executescript(_SCHEMA)
            with self._db:
                self._set("format", FORMAT)
        self._db.executescript(_SCHEMA)

    @classmethod
    def open(cls, folder: str | Path, config: MilvusConfig) -> DerivedLedger:
        return cls(ledger_file(Path(folder), config))

    @staticmethod
    def remove(folder: str | Path, config: MilvusConfig) -> None:
        """Delete the file of a collection that was dropped."""
        path = ledger_file(Path(folder), config)
        for suffix in ("", "-wal", "-shm"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)

    # ---- the marks --------------------------------------------------------------------------------
    def _meta(self, key: str) -> str | None:
        row = self._db.execute("select value from meta where key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def _set(self, key: str, value: str) -> None:
        self._db.execute(
            "insert into meta (key, value) values (?, ?) on conflict(key) do update set value = excluded.value",
            (key, value),
        )

    @property
    def mark(self) -> str:
        with self._lock:
            return self._meta("mark") or ""

    def in_step(self, collection_mark: str | None) -> bool:
        """Whether the file holds what the collection holds, given the collection's mark."""
        return bool(collection_mark) and collection_mark != UNSEALED and collection_mark == self.mark

    def unseal(self) -> None:
        """A write is about to happen: the file is not to be trusted until `seal`."""
        _handed.clear()
        with self._lock:
            if self.mark:
                with self._db:
                    self._set("mark", "")

    def seal(self, mark: str) -> None:
        """The collection was given `mark` after every write so far landed: the file is in step again."""
        with self._lock:
            with self._db:
                self._set("mark", mark)

    # ---- kept in step by the writer ----------------------------------------------------------------
    def record(self, rows: Iterable[ChunkRow], dim: int | None = None) -> None:
        """Rows Milvus took (upserted, each replacing its chunk_id)."""
        _handed.clear()
        with self._lock:
            with self._db:
                self._write(_entry(row, dim) for row in rows)

    def _write(self, entries: Iterable[tuple[tuple[Any, ...], tuple[str, str]]]) -> None:
        rows, texts = [], []
        for row, text in entries:
            rows.append(row)
            texts.append(text)
            if len(rows) >= 10_000:
                self._db.executemany(_INSERT, rows)
                self._db.executemany(_INSERT_FIGURES, texts)
                rows, texts = [], []
        self._db.executemany(_INSERT, rows)
        self._db.executemany(_INSERT_FIGURES, texts)

    def forget(self, chunk_ids: Iterable[str]) -> None:
        """Rows Milvus deleted."""
        _handed.clear()
        ids = [(chunk_id,) for chunk_id in chunk_ids]
        with self._lock:
            with self._db:
                self._db.executemany("delete from chunk where chunk_id = ?", ids)
                self._db.executemany("delete from figure where chunk_id = ?", ids)

    def rebuild(self, rows: Iterable[ChunkRow], dim: int, mark: str) -> int:
        """Replace everything with `rows` (every row of the collection, read with SCAN_FIELDS) and take `mark`, the
        collection's: one transaction, so a rebuild cut short leaves the file as untrusted as it was. The count."""
        count = 0
        _handed.clear()

        def entries() -> Iterator[tuple[tuple[Any, ...], tuple[str, str]]]:
            nonlocal count
            for row in rows:
                count += 1
                yield _entry(row, dim)

        with self._lock, self._db:
            self._set("mark", "")
            self._db.execute("delete from chunk")
            self._db.execute("delete from figure")
            self._write(entries())
            self._set("mark", mark)
        return count

    # ---- read ---------------------------------------------------------------------------------------
    def ledger(self, source: str) -> dict[str, IndexedDocument]:
        """What index/ledger.py collection_ledger reads from the collection, from the file (or the read `hand_on`
        kept, when nothing was written since: the file's mark is the same)."""
        handed = _handed.pop((str(self.path), source, self.mark), None)
        if handed is not None:
            return handed
        with self._lock:
            rows = self._db.execute(
                "select chunk_id, document_id, version, chunk_type = ?, parent_chunk_id, sections, children, access"
                " from chunk where source = ? and is_current = 1",
                (ChunkType.FULL_TEXT.value, source),
            ).fetchall()
        return read_rows(rows)

    def hand_on(self, source: str, ledger: dict[str, IndexedDocument]) -> None:
        """Keep `ledger` (read from this file) for the next read of `source`'s in this process, as long as the file
        keeps its mark: the no-op check that found work hands its read to the flow run that follows (at 20k pages
        the read is 0.6 s of a run). One at a time; the read treats it as its own."""
        _handed.clear()
        _handed[(str(self.path), source, self.mark)] = ledger

    def counts(self) -> Counter[tuple[str, str, str]]:
        """Rows per (tenant, source, chunk_type), as CollectionReader.counts scans them (from an index of their own:
        0.03 s at 100k pages where a pass over the rows took 0.27, most of `cairn status` after its imports)."""
        with self._lock:
            rows = self._db.execute("select tenant, source, chunk_type, count(*) from chunk group by 1, 2, 3")
            found = rows.fetchall()
        return Counter({(tenant, source, kind): n for tenant, source, kind, n in found})

    def sources(self) -> set[str]:
        """The names of the sources with rows in the collection: one seek in the index on source per name (every
        ingest asks, an unchanged one too: no pass over the rows)."""
        found: set[str] = set()
        last = ""
        with self._lock:
            while True:
                (name,) = self._db.execute("select min(source) from chunk where source > ?", (last,)).fetchone()
                if name is None:
                    return found
                found.add(name)
                last = name

    def tally(self) -> list[tuple[str, str, str, bool, str, int, int]]:
        """Rows grouped by (source, tenant, chunk_type, is_current, recipe), each group's rows and its distinct
        (document, version) pairs: what index/holdings.py counts documents, versions and rows from."""
        with self._lock:
            found = self._db.execute(
                "select source, tenant, chunk_type, is_current, recipe, count(*),"
                " count(distinct document_id || char(31) || version) from chunk group by 1, 2, 3, 4, 5"
            ).fetchall()
        return [(s, t, kind, bool(current), recipe, n, v) for s, t, kind, current, recipe, n, v in found]

    def figures(self, rows: Rows = Rows(), stamped: bool = False) -> Iterator[dict[str, Any]]:
        """The figures of the current `rows`; `stamped`: each with its `stamp` too (what `store_checks` needs to
        know the row is still the one checked)."""
        for text, stamp in self.select("figures, stamp", rows):
            yield {**json.loads(text), "stamp": stamp} if stamped else json.loads(text)

    def select(
        self, columns: str, rows: Rows, where: str = "", params: Iterable[Any] = (), tail: str = ""
    ) -> list[tuple[Any, ...]]:
        """`columns` (SQL over the chunk table, and `figures`, read beside only when named) of the current `rows`
        where `where` (SQL, with `params`) holds too, then `tail` (SQL: "group by ...", "order by ... limit ...")."""
        conditions, values = ["is_current = 1"], []
        for column, value in (("source", rows.source), ("tenant", rows.tenant)):
            if value is not None:
                conditions.append(f"{column} = ?")
                values.append(value)
        if where:
            conditions.append(where)
            values.extend(params)
        with self._lock:
            if rows.documents is not None:
                self._db.execute("create temp table if not exists picked (document_id text primary key)")
                self._db.execute("delete from picked")
                self._db.executemany("insert or ignore into picked values (?)", ((d,) for d in rows.documents))
                conditions.append("document_id in (select document_id from picked)")
            tables = "chunk join figure using (chunk_id)" if "figures" in columns else "chunk"
            sql = f"select {columns} from {tables} where {' and '.join(conditions)} {tail}"
            found = self._db.execute(sql, values).fetchall()
            self._db.commit()  # the temporary table's transaction: no read left open
        return found

    def store_checks(self, outcomes: Iterable[tuple[str, int, int, str, str]]) -> int:
        """Rows' check outcomes, each (signature, checked mask, failed mask, chunk_id, stamp) (quality/): kept only
        where the row is still the one checked (same chunk_id and stamp). How many were kept."""
        with self._lock, self._db:
            cursor = self._db.executemany(
                "update chunk set checks = ?, checked = ?, failed = ? where chunk_id = ? and stamp = ?", outcomes
            )
            return cursor.rowcount

    def entries(self) -> dict[str, tuple[Any, ...]]:
        """chunk_id -> (source, document_id, chunk_type, is_current, version) of every row: what reconcile
        compares with the collection."""
        with self._lock:
            rows = self._db.execute(
                "select chunk_id, source, document_id, chunk_type, is_current, version from chunk"
            ).fetchall()
        return {row[0]: (row[1], row[2], row[3], bool(row[4]), row[5]) for row in rows}

    def close(self) -> None:
        self._db.close()


def _entry(row: ChunkRow, dim: int | None) -> tuple[tuple[Any, ...], tuple[str, str]]:
    """A row's entry in the chunk table, and its figures' in the figure table."""
    entry = LedgerEntry.of(row)
    flat = figures(row, dim)
    text = json.dumps(flat, separators=(",", ":"))
    return (
        entry.chunk_id,
        row.source_name,
        entry.document_id,
        row.tenant_id,
        row.chunk_type,
        int(bool(row.is_current)),
        entry.version,
        entry.parent_chunk_id,
        entry.sections,
        entry.children,
        entry.access,
        row.content_type,
        hashlib.sha256(text.encode()).hexdigest()[:16],
        flat["token_count"],
        flat["abstract_token_count"],
        flat["chunk_health_score"],
        entry.recipe if entry.is_parent else DocumentStamp.from_row(row).recipe,  # every row: status counts them
    ), (entry.chunk_id, text)


@contextmanager
def in_step_ledger(folder: str | Path, reader: CollectionReader) -> Iterator[DerivedLedger | None]:
    """For a reader (status, report, a run's quality check): the collection's derived ledger when one exists and
    is in step with it, else None (read the collection instead). Never creates or rebuilds one, nor empties one
    of another format (another Cairn's, mid-upgrade: the writer's to rebuild)."""
    path = ledger_file(Path(folder), reader.config)
    if not path.exists() or _format_of(path) != FORMAT:
        yield None
        return
    with DerivedLedger(path) as derived:
        yield derived if derived.in_step(collection_mark(reader.client, reader.collection)) else None


def _format_of(path: Path) -> str | None:
    """The format a ledger file says it holds, read without writing to it (None: unreadable, or no format)."""
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
            found = db.execute("select value from meta where key = 'format'").fetchone()
    except sqlite3.Error:
        return None
    return None if found is None else str(found[0])


def collection_mark(client: Any, collection: str) -> str:
    """The mark a collection carries ("" when never sealed, UNSEALED while being written)."""
    properties = client.describe_collection(collection).get("properties") or {}
    return str(properties.get(MARK_PROPERTY) or "")


def set_collection_mark(client: Any, collection: str, mark: str) -> None:
    client.alter_collection_properties(collection, properties={MARK_PROPERTY: mark})
