"""Observed time (flows/sync.py observed): a version is never dated later than the run that saw it, an author's
date in front matter is used where present (clamped the same way), and a version served as current and then
replaced keeps a history interval that `--as-of` can answer from."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime

from cairn.index.memory import InMemoryStore
from cairn.schemas import ChunkType
from tests.conftest import write_page
from tests.unit.test_flows_recipe import SENTENCE, sync

YEAR_2100 = int(datetime(2100, 1, 1, tzinfo=UTC).timestamp())


def body(title: str, n: int = 1) -> str:
    return f"# {title}\n\n" + SENTENCE.format(title=title, n=n) * 30


def parents(store: InMemoryStore, title: str, current: bool = True) -> list[dict]:
    return [
        r
        for r in store.rows_by_id.values()
        if r.title == title and r.is_current == current and r.chunk_type == ChunkType.FULL_TEXT.value
    ]


def test_a_page_dated_2100_is_served_as_updated_when_it_was_seen(tmp_path):
    page = write_page(tmp_path / "wiki", "future.md", body("Future"))
    os.utime(page, (YEAR_2100, YEAR_2100))
    write_page(tmp_path / "wiki", "hugo.md", body("Hugo"), lastmod="2017-05-01", date="2016-01-02")
    write_page(tmp_path / "wiki", "dated.md", body("Dated"), date="2099-06-01")
    store = InMemoryStore()
    before = int(time.time())

    sync(tmp_path, store)

    after = int(time.time())
    (future,) = parents(store, "Future")
    assert before <= future.updated_at <= after and before <= future.temporal_start <= after
    (hugo,) = parents(store, "Hugo")  # front matter's lastmod, then date
    assert hugo.updated_at == int(datetime(2017, 5, 1, tzinfo=UTC).timestamp()) == hugo.temporal_start
    assert hugo.created_at == int(datetime(2016, 1, 2, tzinfo=UTC).timestamp())
    (dated,) = parents(store, "Dated")  # an author's date in the future: clamped the same way
    assert before <= dated.updated_at <= after


def test_a_future_dated_version_served_then_replaced_keeps_a_history_interval(tmp_path):
    page = write_page(tmp_path / "wiki", "future.md", body("Future", 1))
    os.utime(page, (YEAR_2100, YEAR_2100))
    store = InMemoryStore()
    sync(tmp_path, store, keep_history=True)
    (served,) = parents(store, "Future")
    time.sleep(1.1)  # the next run sees the replacement a second later at least
    page.write_text(body("Future", 2), encoding="utf-8")
    os.utime(page, (YEAR_2100 + 60, YEAR_2100 + 60))

    sync(tmp_path, store, keep_history=True)

    (old,) = parents(store, "Future", current=False)
    (new,) = parents(store, "Future")
    assert old.temporal_start == served.temporal_start < old.temporal_end == new.temporal_start
    assert new.temporal_start <= int(time.time())  # as of a moment between, the old version answers
