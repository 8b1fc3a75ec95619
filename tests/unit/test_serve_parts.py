"""The service's pure parts: keys to principals, the rate limit, the feedback rates, the [serve] table."""

from __future__ import annotations

import hashlib
import time

import pytest
from pydantic import ValidationError

from cairn.schemas.config import ServeConfig
from cairn.serve.auth import MAX_KEY_CHARS, Keyring, RateLimiter, retry_after
from cairn.serve.feedback import FeedbackStore


def principal(name: str, key: str, **extra) -> dict:
    return {"name": name, "key_sha256": hashlib.sha256(key.encode()).hexdigest(), "tenant": "acme", **extra}


def test_a_key_finds_its_principal_and_nothing_else_does():
    ring = Keyring(
        ServeConfig(principals=[principal("a", "alpha", groups=["sre"]), principal("b", "beta", groups=["ops"])])
    )
    assert ring.caller("Bearer alpha").principal.groups == ("sre",)
    assert ring.caller("bearer   beta ").name == "b"  # the scheme is case-insensitive, spaces around are dropped
    for header in (None, "", "alpha", "Basic alpha", "Bearer", "Bearer alph", "Bearer alpha2", "Token alpha"):
        assert ring.caller(header) is None, header
    assert ring.caller("Bearer " + "a" * (MAX_KEY_CHARS + 1)) is None


def test_the_config_holds_hashes_only_and_refuses_what_would_confuse_callers():
    with pytest.raises(ValidationError, match="64 hex digits"):
        ServeConfig(principals=[{"name": "a", "key_sha256": "my-secret-key", "tenant": "acme", "groups": ["sre"]}])
    with pytest.raises(ValidationError, match="name must be unique"):
        ServeConfig(principals=[principal("a", "k1", groups=["x"]), principal("a", "k2", groups=["y"])])
    with pytest.raises(ValidationError, match="key_sha256 must be unique"):
        ServeConfig(principals=[principal("a", "same", groups=["x"]), principal("b", "same", groups=["y"])])
    with pytest.raises(ValidationError, match="groups"):
        ServeConfig(principals=[principal("a", "k", groups=[])])
    with pytest.raises(ValidationError, match="principal name"):
        ServeConfig(principals=[principal("a b", "k", groups=["x"])])
    upper = principal("a", "k", groups=["x"])
    upper["key_sha256"] = upper["key_sha256"].upper()
    assert ServeConfig(principals=[upper]).principals[0].key_sha256 == upper["key_sha256"].lower()


def test_the_rate_limit_lets_a_burst_through_then_refills_at_its_rate():
    ring = Keyring(ServeConfig(rate_per_minute=60, principals=[principal("a", "k", groups=["x"])]))
    caller, limiter = ring.caller("Bearer k"), RateLimiter()
    assert [limiter.wait_seconds(caller, now=100.0) for _ in range(60)] == [0.0] * 60
    assert limiter.wait_seconds(caller, now=100.0) == pytest.approx(1.0)  # one a second at 60/minute
    assert limiter.wait_seconds(caller, now=100.5) == pytest.approx(0.5)
    assert limiter.wait_seconds(caller, now=101.0) == 0.0
    assert retry_after(0.2) == "1" and retry_after(2.1) == "3"


def test_a_key_of_its_own_rate_and_zero_meaning_no_limit():
    ring = Keyring(
        ServeConfig(
            rate_per_minute=1,
            principals=[principal("a", "k", groups=["x"], rate_per_minute=0), principal("b", "j", groups=["x"])],
        )
    )
    free, held, limiter = ring.caller("Bearer k"), ring.caller("Bearer j"), RateLimiter()
    assert all(limiter.wait_seconds(free, now=1.0) == 0.0 for _ in range(1000))
    assert limiter.wait_seconds(held, now=1.0) == 0.0 and limiter.wait_seconds(held, now=1.0) > 0


def test_feedback_rates_count_only_marks_of_served_sections_by_their_caller(tmp_path):
    store = FeedbackStore(tmp_path / "feedback.sqlite", keep_days=7)
    store.record("q1", "bot", [("c1", False), ("c2", True)])
    store.record("q2", "bot", [("c3", True)])
    assert store.rates() == {"marked": 0.0, "injected_marked": 0.0}
    assert store.mark("q1", "c2", "other-bot", useful=True) is None  # not served to this caller
    assert store.mark("q1", "c9", "bot", useful=True) is None  # not in that answer
    assert store.mark("q1", "c2", "bot", useful=False) is True
    assert store.mark("q1", "c2", "bot", useful=True) is True  # the second mark replaces the first
    assert store.mark("q2", "c3", "bot", useful=False) is True
    assert store.mark("q1", "c1", "bot", useful=True) is False
    rates = store.rates()
    assert rates["sparse_recall_hit_rate"] == 0.5 and rates["sparse_recall_false_positive_rate"] == 0.5
    assert rates["marked"] == 3 and rates["injected_marked"] == 2 and rates["useful_rate"] == pytest.approx(2 / 3)
    store.close()


def test_feedback_older_than_the_window_neither_counts_nor_can_be_marked(tmp_path):
    store = FeedbackStore(tmp_path / "feedback.sqlite", keep_days=1)
    store.record("old", "bot", [("c1", True)])
    store.mark("old", "c1", "bot", useful=True)
    assert store.rates()["marked"] == 1
    store._db.execute("UPDATE served SET at = at - 2 * 86400")  # two days pass: the row and its count age alike
    store._db.execute("UPDATE marks SET hour = hour - 48")
    store._db.commit()
    assert store.rates()["marked"] == 0 and store.mark("old", "c1", "bot", useful=False) is None
    store.prune()
    assert store._db.execute("SELECT count(*) FROM served").fetchone()[0] == 0
    store.close()


def test_a_key_is_hashed_as_its_bytes_came_so_sha256sum_of_the_key_matches():
    ring = Keyring(ServeConfig(principals=[principal("u", "clé-ünïcode", groups=["x"])]))
    assert ring.caller("Bearer clé-ünïcode".encode()).name == "u"  # the header's raw bytes (UTF-8)
    assert ring.caller("Bearer clé-ünïcode".encode("latin-1")) is None  # other bytes, another key


def truth(store: FeedbackStore) -> dict[tuple[bool, bool], int]:
    """The marked counts as the rows say them (what the scrape computed before running counts)."""
    rows = store._db.execute("SELECT injected, useful, count(*) FROM served WHERE useful IS NOT NULL GROUP BY 1, 2")
    return {(bool(i), bool(u)): n for i, u, n in rows}


def test_the_running_counts_follow_every_mark_remark_and_prune(tmp_path, monkeypatch):
    """Issue #51: every scrape counted every marked row with a GROUP BY; the counts now move with the writes."""
    import random

    from cairn.serve import feedback

    monkeypatch.setattr(feedback, "MAX_BYTES", 256 * 1024)  # the byte bound reached within the test
    store = FeedbackStore(tmp_path / "feedback.sqlite", keep_days=7)
    chance = random.Random(51)
    for n in range(3000):
        store.record(f"q{n}", "bot", [(f"c{n}-{i}", i == 0) for i in range(3)])
        if chance.random() < 0.5:
            store.mark(f"q{n}", f"c{n}-{chance.randrange(3)}", "bot", useful=chance.random() < 0.5)
        if chance.random() < 0.1:  # a second mark on an earlier answer, when still kept
            m = chance.randrange(n + 1)
            store.mark(f"q{m}", f"c{m}-0", "bot", useful=chance.random() < 0.5)
    store.prune()
    counts, rates = truth(store), store.rates()
    assert store.live_bytes() <= feedback.MAX_BYTES  # the oldest rows went, their counts with them
    assert store._db.execute("SELECT count(*) FROM served WHERE query_id = 'q2999'").fetchone()[0] == 3  # newest kept
    assert rates["marked"] == sum(counts.values()) and 0 < rates["marked"] < 3000
    injected = counts.get((True, True), 0) + counts.get((True, False), 0)
    assert rates["injected_marked"] == injected
    assert rates["sparse_recall_hit_rate"] == pytest.approx(counts[(True, True)] / injected)
    store.close()


def test_a_scrape_never_waits_for_the_lock_the_answers_hold(tmp_path):
    """Issue #51: rates() held the store's lock that record() and mark() take, on the same thread pool."""
    import threading

    store = FeedbackStore(tmp_path / "feedback.sqlite", keep_days=7)
    store.record("q1", "bot", [("c1", True)])
    store.mark("q1", "c1", "bot", useful=True)
    read: list[dict[str, float]] = []
    with store._lock:  # an answer being recorded (or a long prune) holds it
        scrape = threading.Thread(target=lambda: read.append(store.rates()), daemon=True)
        scrape.start()
        scrape.join(timeout=60)  # a hang guard, not a speed check
        assert read == [
            {
                "marked": 1.0,
                "injected_marked": 1.0,
                "sparse_recall_hit_rate": 1.0,
                "sparse_recall_false_positive_rate": 0.0,
                "useful_rate": 1.0,
            }
        ]
    store.close()


def test_a_store_from_before_the_running_counts_gets_them_from_its_rows(tmp_path):
    import sqlite3

    from cairn.serve.feedback import SCHEMA

    path = tmp_path / "feedback.sqlite"
    old = sqlite3.connect(path)
    old.execute(SCHEMA)
    now = time.time()
    rows = [("q1", "c1", "bot", 1, now, 1), ("q1", "c2", "bot", 0, now, 0), ("q2", "c3", "bot", 1, now, None)]
    old.executemany("INSERT INTO served VALUES (?, ?, ?, ?, ?, ?)", rows)
    old.commit()
    old.close()
    store = FeedbackStore(path, keep_days=7)
    assert store.rates() == {
        "marked": 2.0,
        "injected_marked": 1.0,
        "sparse_recall_hit_rate": 1.0,
        "sparse_recall_false_positive_rate": 0.0,
        "useful_rate": 0.5,
    }
    store.close()
    assert FeedbackStore(path, keep_days=7).rates()["marked"] == 2.0  # opened again: counted once, not twice


def test_the_principals_are_re_read_when_the_file_changes_and_kept_when_it_no_longer_loads(tmp_path):
    from cairn.serve.metrics import ServiceMetrics
    from cairn.serve.reload import PrincipalsReloader

    def entry(name: str, key: str) -> str:
        digest = hashlib.sha256(key.encode()).hexdigest()
        return f'[[serve.principals]]\nname = "{name}"\nkey_sha256 = "{digest}"\ntenant = "acme"\ngroups = ["sre"]\n'

    path = tmp_path / "cairn.toml"
    path.write_text(f'state_path = "{tmp_path}/state.sqlite"\n' + entry("a", "alpha") + entry("b", "beta"))
    from cairn.schemas.config import load_config

    ring, metrics = Keyring(load_config(path).serve), ServiceMetrics(None)
    reloader = PrincipalsReloader(path, ring, metrics)
    reloader.check()  # unchanged: nothing re-read
    assert ring.caller("Bearer alpha") and ring.caller("Bearer beta")
    path.write_text(f'state_path = "{tmp_path}/state.sqlite"\n' + entry("b", "beta"))
    reloader.check()
    assert ring.caller("Bearer alpha") is None and ring.caller("Bearer beta").name == "b"
    path.write_text("[[serve.principals]\n")  # a half-written file
    reloader.check()
    assert ring.caller("Bearer beta").name == "b"  # the last good principals stay
    scraped = metrics.exposition().decode()
    assert "cairn_config_reload_ok 0.0" in scraped and 'cairn_config_reloads_total{outcome="failed"} 1.0' in scraped
