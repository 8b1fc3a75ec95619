"""The derived ledger (index/derived.py) without Milvus: kept in step with an InMemoryStore through real syncs
(first run, edit, delete, history), it reads back the ledger, counts and figures the store's own rows give; its
marks decide when it is trusted; a file of another format, or damaged, starts empty and untrusted."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import pytest

from cairn.index.derived import UNSEALED, DerivedLedger
from cairn.index.memory import InMemoryStore
from cairn.schemas.row_figures import figures
from cairn.schemas.rows import ChunkRow
from tests.unit.test_flows_sync import PAGES, page, sync


@pytest.fixture
def wiki(tmp_path) -> Path:
    for name in PAGES:
        page(tmp_path / "wiki", name)
    return tmp_path / "wiki"


class RecordingStore(InMemoryStore):
    """An InMemoryStore that records each write in a derived ledger, as MilvusStore does once Milvus took it."""

    def __init__(self, derived: DerivedLedger) -> None:
        super().__init__()
        self.derived = derived

    def upsert(self, rows: list[ChunkRow]) -> int:
        written = super().upsert(rows)
        self.derived.record(rows)
        return written

    def retire_chunks(self, chunk_ids: Iterable[str], history: bool, at: int) -> None:
        ids = list(chunk_ids)
        super().retire_chunks(ids, history, at)
        if history:
            self.derived.record([self.rows_by_id[i] for i in ids if i in self.rows_by_id])
        else:
            self.derived.forget(ids)

    def delete_chunks(self, chunk_ids: Iterable[str]) -> None:
        ids = list(chunk_ids)
        super().delete_chunks(ids)
        self.derived.forget(ids)


def assert_same(store: RecordingStore) -> None:
    derived = store.derived
    assert derived.ledger("wiki") == store.ledger("wiki")
    rows = store.rows_by_id.values()
    assert derived.counts() == Counter((r.tenant_id, r.source_name, r.chunk_type) for r in rows)
    expected = sorted((figures(r) for r in rows if r.is_current), key=lambda f: f["chunk_id"])
    assert sorted(derived.figures(), key=lambda f: f["chunk_id"]) == expected


def test_kept_in_step_through_first_run_edit_and_delete(tmp_path, wiki):
    with DerivedLedger(tmp_path / "ledger.sqlite") as derived:
        store = RecordingStore(derived)
        sync(tmp_path, store)
        assert_same(store)
        page(wiki, "alpha", body="# {title}\n\nA new first step for {title}. " * 40)
        (wiki / "beta.md").unlink()
        part = sync(tmp_path, store)
        assert (part.documents.indexed, part.documents.deleted) == (1, 1)
        assert_same(store)
        assert set(derived.ledger("wiki")) == set(store.ledger("wiki")) and len(derived.ledger("wiki")) == 2


def test_with_history_superseded_rows_are_counted_but_not_current(tmp_path, wiki):
    with DerivedLedger(tmp_path / "ledger.sqlite") as derived:
        store = RecordingStore(derived)
        sync(tmp_path, store, keep_history=True)
        page(wiki, "gamma", body="# {title}\n\nThe {title} runbook, rewritten. " * 40)
        sync(tmp_path, store, keep_history=True)
        assert any(not row.is_current for row in store.rows_by_id.values())
        assert_same(store)


def test_only_equal_marks_are_trusted(tmp_path):
    with DerivedLedger(tmp_path / "ledger.sqlite") as derived:
        assert not derived.in_step("") and not derived.in_step(None)  # never sealed
        derived.seal("m1")
        assert derived.in_step("m1") and not derived.in_step("m2") and not derived.in_step(UNSEALED)
        derived.unseal()
        assert not derived.in_step("m1")
    with DerivedLedger(tmp_path / "ledger.sqlite") as reopened:
        assert reopened.mark == ""


def test_a_file_of_another_format_or_damaged_starts_empty_and_untrusted(tmp_path, wiki):
    path = tmp_path / "ledger.sqlite"
    with DerivedLedger(path) as derived:
        sync(tmp_path, RecordingStore(derived))
        derived.seal("m1")
        assert derived.counts()
        with derived._db:
            derived._db.execute("update meta set value = 'older' where key = 'format'")
    with DerivedLedger(path) as reopened:
        assert reopened.mark == "" and reopened.counts() == Counter()
    path.write_bytes(b"\x00 not sqlite " * 512)
    with DerivedLedger(path) as rebuilt:
        assert rebuilt.mark == "" and rebuilt.counts() == Counter()
    assert path.with_name(path.name + ".damaged").exists()


def test_a_file_of_the_first_format_with_fewer_columns_is_dropped_and_takes_writes_again(tmp_path, wiki):
    import sqlite3

    path = tmp_path / "ledger.sqlite"
    old = sqlite3.connect(path)  # format 1: no content type, stamp or check outcomes
    old.executescript(
        "create table meta (key text primary key, value text);"
        "insert into meta values ('format', '1'), ('mark', 'm0');"
        "create table chunk (chunk_id text primary key, source text not null, document_id text not null,"
        " tenant text not null, chunk_type text not null, is_current integer not null, version text not null,"
        " parent_chunk_id text not null, sections integer not null, children integer not null,"
        " access text not null, figures text not null);"
        "insert into chunk values ('c', 's', 'd', 't', 'child', 1, 'v', 'p', 1, 1, '', '{}');"
    )
    old.commit()
    old.close()
    with DerivedLedger(path) as derived:
        assert derived.mark == "" and derived.counts() == Counter()
        sync(tmp_path, RecordingStore(derived))
        assert derived.counts() and all(f["stamp"] for f in derived.figures(stamped=True))


def test_a_rebuild_replaces_everything_and_takes_the_collection_mark(tmp_path, wiki):
    source = InMemoryStore()
    sync(tmp_path, source)
    with DerivedLedger(tmp_path / "ledger.sqlite") as derived:
        derived.record(
            [replace(row, chunk_id="stray", document_id="stray") for row in list(source.rows_by_id.values())[:1]]
        )
        count = derived.rebuild(iter(source.rows_by_id.values()), dim=16, mark="m9")
        assert count == len(source.rows_by_id) and derived.mark == "m9"
        assert derived.ledger("wiki") == source.ledger("wiki")


def test_a_read_handed_on_is_the_next_reads_until_anything_is_written(tmp_path, wiki):
    with DerivedLedger(tmp_path / "ledger.sqlite") as derived:
        store = RecordingStore(derived)
        sync(tmp_path, store)
        derived.seal("m1")
        first = derived.ledger("wiki")
        derived.hand_on("wiki", first)
        assert derived.ledger("wiki") is first  # handed to the next read: not read again
        assert derived.ledger("wiki") is not first and derived.ledger("wiki") == first  # once
        derived.hand_on("wiki", first)
        derived.unseal()
        page(wiki, "alpha", body="# {title}\n\nA new first step for {title}. " * 40)
        sync(tmp_path, store)
        assert derived.ledger("wiki") is not first and derived.ledger("wiki") == store.ledger("wiki")
