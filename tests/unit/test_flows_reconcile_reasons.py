"""`cairn reconcile` says why a document the source lists is not in the collection (flows/reconcile.py): failed
at the last ingest (drift, with the reason), refused by a policy (not drift), nothing to index in it (not drift),
or not ingested yet (drift). A source synced as tests/unit/test_flows_sync.py syncs one, then checked against the
same store with the outcomes the sync left in the state file."""

from __future__ import annotations

from pathlib import Path

from cairn.flows.reconcile import check_source
from cairn.index.memory import InMemoryStore
from cairn.index.state import SourceState
from cairn.schemas.config import WikiSourceConfig
from tests.conftest import write_page
from tests.unit.test_flows_sync import page, sync

SETTINGS = {"acl_ceiling": ["sre"]}


def check(tmp_path: Path, store: InMemoryStore, **source):
    config = WikiSourceConfig(
        name="wiki", type="wiki", path=str(tmp_path / "wiki"), tenant="acme", acl=["sre"], **{**SETTINGS, **source}
    )
    state = SourceState(tmp_path / "index" / "state.sqlite")  # as the sync helper keeps it
    try:
        return check_source(config, store.ledger, outcomes=state.outcomes("wiki").all())
    finally:
        state.close()


def test_each_document_the_collection_lacks_says_why(tmp_path):
    wiki = tmp_path / "wiki"
    page(wiki, "alpha")
    write_page(wiki, "widen.md", "# Widen\n\nA page granting itself more than its source does.\n", acl=["everyone"])
    (wiki / "binary.md").write_bytes(b"\x00\x01\x02")
    (wiki / "_index.md").write_text("---\ntitle: Section\n---\n", encoding="utf-8")
    store = InMemoryStore()
    sync(tmp_path, store, **SETTINGS)
    page(wiki, "added")  # since the last ingest
    drift = check(tmp_path, store)
    assert drift.missing == ["added.md", "binary.md"] and not drift.clean
    assert list(drift.failed) == ["binary.md"] and "binary file" in drift.failed["binary.md"]
    assert list(drift.refused) == ["widen.md"] and "never widen" in drift.refused["widen.md"]
    assert list(drift.skipped) == ["_index.md"] and "front matter only" in drift.skipped["_index.md"]
    (wiki / "binary.md").unlink()
    (wiki / "added.md").unlink()
    assert check(tmp_path, store).clean  # what a policy refused and what holds nothing to index are not drift


def test_a_refusal_stands_only_for_the_version_and_the_settings_it_was_made_under(tmp_path):
    wiki = tmp_path / "wiki"
    write_page(wiki, "widen.md", "# Widen\n\nA page granting itself more than its source does.\n", acl=["everyone"])
    store = InMemoryStore()
    sync(tmp_path, store, **SETTINGS)
    assert check(tmp_path, store, acl_ceiling=["sre", "everyone"]).missing == ["widen.md"]  # the ceiling moved
    write_page(wiki, "widen.md", "# Widen\n\nEdited since.\n", acl=["everyone"])
    assert check(tmp_path, store).missing == ["widen.md"]  # a new version: not ingested yet


def test_removals_the_mass_delete_guard_held_back_are_refused_not_stale(tmp_path):
    wiki = tmp_path / "wiki"
    names = [f"page{i:02d}" for i in range(12)]
    for name in names:
        page(wiki, name)
    store = InMemoryStore()
    sync(tmp_path, store, **SETTINGS)
    for name in names[:8]:
        (wiki / f"{name}.md").unlink()
    held = sync(tmp_path, store, **SETTINGS)
    assert held.failures and held.failures[0].policy  # the source failed: nothing removed
    drift = check(tmp_path, store)
    assert len(drift.refused) == 8 and not drift.stale and drift.clean
    assert all("removal held back" in reason for reason in drift.refused.values())
