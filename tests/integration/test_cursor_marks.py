"""Cursors belong to the collection's write history (index/state.py): a collection restored from a backup (or
written by another writer since) has another mark than the one a cursor was saved at, so the cursor is dropped and
the source listed whole, and the restored collection converges to the source. One test per cursor kind: a
PagerDuty API's high-water mark, a git source's last commit. The collection is an InMemoryStore (its mark is its
count of writes, restored with its rows as a Lite folder's property is with its files); the sources are real (a
fake PagerDuty API over HTTP on 127.0.0.1, a git repository)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from cairn.flows.context import RunContext
from cairn.flows.options import RunOptions
from cairn.flows.progress import Silent
from cairn.flows.steps import IngestSteps, InlineRunner
from cairn.flows.sync import SourceSync
from cairn.index.cache import EmbeddingCache
from cairn.index.memory import InMemoryStore
from cairn.index.state import SourceState
from cairn.schemas.config import load_config
from cairn.schemas.run_report import SourceReport
from tests.conftest import REPO, write_config
from tests.encoders import HashingEncoder
from tests.git_repo import Repo
from tests.pagerduty_server import TOKEN, FakePagerDuty

pytestmark = pytest.mark.slow
SAMPLE = REPO / "data" / "pagerduty"


def sync(tmp_path: Path, store: InMemoryStore, source: dict) -> SourceReport:
    config = load_config(write_config(tmp_path / "c.toml", tmp_path / "index", [source]))
    encoder = HashingEncoder()
    cache, state = EmbeddingCache(config.embedding.cache_path, encoder.dim), SourceState(config.state_path)
    try:
        steps = IngestSteps.bind(config, encoder, cache, store, InlineRunner())
        return SourceSync(
            RunContext(config, RunOptions(), store, state, steps=steps, progress=Silent()), config.sources[0]
        ).sync()
    finally:
        cache.close()
        state.close()


class Backup:
    """A copy of the collection, its mark with it."""

    def __init__(self, store: InMemoryStore) -> None:
        self.rows, self.writes = copy.deepcopy(store.rows_by_id), store.writes

    def restore(self, store: InMemoryStore) -> None:
        store.rows_by_id, store.writes = copy.deepcopy(self.rows), self.writes


def texts(store: InMemoryStore, locator: str) -> str:
    return " ".join(r.text for r in store.rows_by_id.values() if r.is_current and r.locator == locator)


def test_a_restored_backup_drops_the_pagerduty_high_water_mark_and_converges(tmp_path, monkeypatch):
    monkeypatch.setenv("CAIRN_TEST_PD_TOKEN", TOKEN)
    incidents = json.loads((SAMPLE / "incidents.json").read_text())["incidents"]
    parts = {
        i["id"]: {
            p: json.loads((SAMPLE / i["id"] / f"{p}.json").read_text())[p] for p in ("log_entries", "notes", "alerts")
        }
        for i in incidents
    }
    store = InMemoryStore()
    with FakePagerDuty(incidents, parts) as api:
        source = {"name": "pd", "type": "pagerduty", "api_url": api.url, "token_env": "CAIRN_TEST_PD_TOKEN"}
        source |= {"tenant": "acme", "acl": ["sre"], "retry_base_seconds": 0.01}
        assert sync(tmp_path, store, source).documents.indexed == 6
        backup = Backup(store)
        kafka = next(i for i in incidents if i["id"] == "Q4KAFKA")
        kafka.update(title="Kafka lag renamed after the backup", updated_at="2026-04-06T09:00:00Z")
        parts["Q4KAFKA"]["log_entries"].append(
            {
                "id": "Q4KAFKAL99",
                "type": "annotate_log_entry",
                "summary": "Renamed",
                "created_at": "2026-04-06T09:00:00Z",
                "incident": {"id": "Q4KAFKA"},
            }
        )
        assert sync(tmp_path, store, source).documents.indexed == 1  # since the mark: the renamed incident
        assert "renamed after the backup" in texts(store, "Q4KAFKA")

        backup.restore(store)  # the old title is back in the collection; the cursor is past the rename
        api.requests.clear()
        again = sync(tmp_path, store, source)

        assert "/incidents" in api.paths()  # listed whole: the cursor was saved at another mark
        assert again.documents.indexed == 1 and "renamed after the backup" in texts(store, "Q4KAFKA")
        api.requests.clear()
        assert sync(tmp_path, store, source).documents.indexed == 0
        assert "/incidents" not in api.paths()  # and the next run follows the mark again


def test_a_restored_backup_drops_the_git_commit_cursor_and_converges(tmp_path):
    repo = Repo(tmp_path / "repo")
    repo.write("runbooks/kafka.md", "# Kafka lag\n\nRestart the consumer group and watch the lag fall.\n" * 20)
    repo.write("runbooks/ledger.md", "# Ledger failover\n\nPromote the replica, then repoint the writers.\n" * 20)
    repo.commit("first", "2026-01-01T00:00:00Z")
    store = InMemoryStore()
    source = {"name": "infra", "type": "git", "repo": str(repo.root), "ref": "main", "tenant": "acme", "acl": ["sre"]}
    source |= {"cache_dir": str(tmp_path / "mirror")}
    assert sync(tmp_path, store, source).documents.indexed == 2
    backup = Backup(store)
    repo.write("runbooks/kafka.md", "# Kafka lag\n\nScale the consumers out before restarting anything.\n" * 20)
    repo.commit("second", "2026-01-02T00:00:00Z")
    assert sync(tmp_path, store, source).documents.indexed == 1
    assert "Scale the consumers out" in texts(store, "runbooks/kafka.md")

    backup.restore(store)
    again = sync(tmp_path, store, source)

    assert again.documents.indexed == 1 and "Scale the consumers out" in texts(store, "runbooks/kafka.md")
    assert sync(tmp_path, store, source).documents.indexed == 0


def test_cursors_follow_the_marks_a_run_writes_itself(tmp_path):
    """Several sources in one run each move the mark; the cursors saved before move with it (no relisting)."""
    state = SourceState(tmp_path / "state.sqlite", "index")
    try:
        state.put("pd", {"high_water": "2026-01-01"}, documents=6, mark="m1")
        state.observe("m1")
        assert state.get("pd", documents=6) == {"high_water": "2026-01-01"}
        state.advance("m1", "m2")  # another source of the same run wrote
        state.observe("m2")
        assert state.get("pd", documents=6) == {"high_water": "2026-01-01"}
        state.observe("m0")  # a restored backup, another writer's mark
        assert state.get("pd", documents=6) == {}
    finally:
        state.close()
