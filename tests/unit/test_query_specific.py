"""query/specific.py IndexTerms: the evidence the gate reads of the index for a question of few words, through the
caller's filter, on the in-memory reader; the count of readable passages (a scan of every row on Milvus Lite) is
remembered per reader and filter for COUNT_SECONDS."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.index.memory import InMemoryStore
from cairn.query.specific import COUNT_SECONDS, IndexTerms
from cairn.schemas.row_filter import RowFilter
from tests.query_corpus import corpus_rows


class CountingStore(InMemoryStore):
    """The in-memory reader, counting how often it is asked to count."""

    def __init__(self) -> None:
        super().__init__()
        self.counted = 0

    def count(self, where: RowFilter) -> int:
        self.counted += 1
        return super().count(where)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store(tmp_path: Path) -> CountingStore:
    memory = CountingStore()
    memory.upsert(corpus_rows(tmp_path))
    return memory


def test_the_readable_passages_are_counted_once_a_minute_per_reader_and_filter(store: CountingStore) -> None:
    sre, payments = RowFilter.access("acme", ["sre"]), RowFilter.access("acme", ["payments"])
    clock = Clock()
    first = IndexTerms(store, sre, clock=clock)(["failover"])
    assert first.total == store.count(sre) > 0 and store.counted == 2
    store.counted = 0
    assert IndexTerms(store, sre, clock=clock)(["ledger"]).total == first.total  # the next question: remembered
    assert store.counted == 0
    IndexTerms(store, payments, clock=clock)(["vault"])  # another caller's filter is counted for itself
    assert store.counted == 1
    clock.now += COUNT_SECONDS
    IndexTerms(store, sre, clock=clock)(["ledger"])  # a minute on: counted again
    assert store.counted == 2


def test_a_count_remembered_is_the_readers_own(tmp_path: Path, store: CountingStore) -> None:
    """A reloaded generation (another reader) counts anew: a count never outlives the rows it counted."""
    where = RowFilter.access("acme", ["sre"])
    IndexTerms(store, where)(["failover"])
    other = CountingStore()
    assert IndexTerms(other, where)(["failover"]).total == 0 and other.counted == 1


def test_the_evidence_counts_each_word_among_the_callers_passages_only(store: CountingStore) -> None:
    sre = IndexTerms(store, RowFilter.access("acme", ["sre"]))(["vault", "failover"])
    payments = IndexTerms(store, RowFilter.access("acme", ["payments"]))(["vault"])
    uses = {use.term: use.passages for use in sre.uses}
    assert uses["vault"] == 0 < uses["failover"]  # the card vault runbook is the payments team's
    assert payments.uses[0].passages > 0


def test_a_word_held_by_more_passages_than_the_cap_is_counted_as_capped(store: CountingStore) -> None:
    where = RowFilter.access("acme", ["sre"])
    held = IndexTerms(store, where)(["failover"]).uses[0].passages
    assert held >= 2
    capped = IndexTerms(store, where, cap=held)(["failover"]).uses[0]
    assert capped.capped and capped.passages == held
    assert not IndexTerms(store, where, cap=held + 1)(["failover"]).uses[0].capped
