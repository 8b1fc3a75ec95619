"""flows.sync.SourceSync, one source brought in line with the collection, run without Milvus or Prefect: an
InMemoryStore (index/memory.py) as the collection, the inline step runner, a hashing encoder as the model,
and a small wiki folder as the source."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from cairn.flows.context import RunContext
from cairn.flows.options import RunOptions
from cairn.flows.progress import Silent
from cairn.flows.steps import IngestSteps, InlineRunner
from cairn.flows.sync import MASS_DELETE_FLOOR, SourceSync
from cairn.index.cache import EmbeddingCache
from cairn.index.memory import InMemoryStore
from cairn.index.state import SourceState
from cairn.schemas import TEMPORAL_OPEN, ChunkType, DocumentRef
from cairn.schemas.config import WikiSourceConfig, load_config
from cairn.schemas.run_report import SOURCE_FAILURE, RunReport, SourceOutcome, SourceReport
from cairn.sources.wiki import WikiSource
from tests.conftest import write_config, write_page
from tests.encoders import HashingEncoder

BODY = "# {title}\n\n" + "Drain the {title} queue, restart its worker and confirm the lag falls below 100. " * 30
PAGES = ("alpha", "beta", "gamma")


def page(root: Path, name: str, body: str = BODY, **front) -> None:
    write_page(root, f"{name}.md", body.format(title=name.title()), **front)


@pytest.fixture
def wiki(tmp_path) -> Path:
    for name in PAGES:
        page(tmp_path / "wiki", name)
    return tmp_path / "wiki"


def sync(tmp_path: Path, store: InMemoryStore, options: RunOptions | None = None, **source) -> SourceReport:
    """One run of the source `wiki` (tmp_path/wiki) into `store` (`options`: none beyond the config by default);
    the embedding cache and cursors persist in tmp_path between runs, as they do next to an index."""
    settings = {"name": "wiki", "type": "wiki", "path": str(tmp_path / "wiki"), "tenant": "acme", "acl": ["sre"]}
    config = load_config(write_config(tmp_path / "c.toml", tmp_path / "index", [{**settings, **source}]))
    encoder = HashingEncoder()
    cache, state = EmbeddingCache(config.embedding.cache_path, encoder.dim), SourceState(config.state_path)
    try:
        steps = IngestSteps.bind(config, encoder, cache, store, InlineRunner())
        run = RunContext(config, options or RunOptions(), store, state, steps=steps, progress=Silent())
        return SourceSync(run, config.sources[0]).sync()
    finally:
        cache.close()
        state.close()


def documents(store: InMemoryStore, current: bool = True) -> dict[str, set[str]]:
    """title -> chunk ids of its rows (its current ones, or its superseded ones)."""
    out: dict[str, set[str]] = {}
    for row in store.rows_by_id.values():
        if row.is_current == current:
            out.setdefault(row.title, set()).add(row.chunk_id)
    return out


def status(part: SourceReport) -> SourceOutcome:
    report = RunReport(run_id="test")
    report.close_source("wiki", part)
    return report.per_source["wiki"]


def test_a_first_run_indexes_every_document_and_counts_what_it_wrote(tmp_path, wiki):
    store = InMemoryStore()
    part = sync(tmp_path, store)
    assert (part.documents.seen, part.documents.indexed, part.documents.failed) == (3, 3, 0)
    assert set(documents(store)) == {"Alpha", "Beta", "Gamma"}
    rows = list(store.rows_by_id.values())
    assert part.rows_written == len(rows)
    assert part.sections == sum(r.chunk_type == ChunkType.FULL_TEXT.value for r in rows)
    assert part.chunks == sum(r.chunk_type == ChunkType.CHILD.value for r in rows)
    assert part.embeddings_computed > 0 and len(part.written_documents["wiki"]) == 3
    assert part.model_seconds > 0  # the time the model took is in the report beside what it computed
    assert all(doc.complete_version for doc in store.ledger("wiki").values())
    assert status(part).status == "ok"


def test_an_unchanged_source_is_indexed_nothing_and_embeds_nothing(tmp_path, wiki):
    store = InMemoryStore()
    sync(tmp_path, store)
    before = dict(store.rows_by_id)
    part = sync(tmp_path, store)
    assert (part.documents.seen, part.documents.unchanged, part.documents.indexed) == (3, 3, 0)
    assert part.rows_written == part.embeddings_computed == part.model_seconds == 0 and part.written_documents == {}
    assert store.rows_by_id == before


def test_an_edited_document_alone_is_indexed_again_and_its_old_rows_are_gone(tmp_path, wiki):
    store = InMemoryStore()
    sync(tmp_path, store)
    old = documents(store)
    page(wiki, "alpha", BODY + "\n\n## Escalation\n\nPage the database on-call when the lag does not fall.\n")
    part = sync(tmp_path, store)
    assert (part.documents.indexed, part.documents.unchanged) == (1, 2)
    now = documents(store)
    assert now["Beta"] == old["Beta"] and now["Gamma"] == old["Gamma"]
    assert now["Alpha"] and not now["Alpha"] & old["Alpha"]  # a new version's ids; none of the old one's left
    assert len(store.rows_by_id) == sum(len(ids) for ids in now.values())


@pytest.mark.parametrize("keep_history", [False, True])  # debris of the served version, not a past version
def test_rows_a_rewrite_of_the_same_version_does_not_produce_are_removed(tmp_path, wiki, keep_history):
    store = InMemoryStore()
    sync(tmp_path, store, keep_history=keep_history)
    child = next(r for r in store.rows_by_id.values() if r.title == "Beta" and r.chunk_type == ChunkType.CHILD.value)
    store.upsert([replace(child, chunk_id="left-over", chunk_order=999)])  # as a chunker change would leave it
    assert store.ledger("wiki")[child.document_id].problems() == ["1 child rows more than their parents list"]
    part = sync(tmp_path, store, keep_history=keep_history)
    assert (part.documents.indexed, part.embeddings_computed) == (1, 0)
    assert "left-over" not in store.rows_by_id and store.ledger("wiki")[child.document_id].complete_version


def test_a_deleted_file_is_retired(tmp_path, wiki):
    store = InMemoryStore()
    sync(tmp_path, store)
    (wiki / "gamma.md").unlink()
    part = sync(tmp_path, store)
    assert (part.documents.deleted, part.documents.unchanged) == (1, 2)
    assert set(documents(store)) == {"Alpha", "Beta"} and len(store.ledger("wiki")) == 2


@pytest.mark.parametrize("keep_history", [False, True])
def test_after_an_edit_and_a_deletion_a_full_scan_finds_no_orphan_and_one_version_per_document(
    tmp_path, wiki, keep_history
):
    store = InMemoryStore()
    sync(tmp_path, store, keep_history=keep_history)
    first = dict(store.rows_by_id)
    page(wiki, "alpha", BODY + "\n\n## Escalation\n\nPage the database on-call when the lag does not fall.\n")
    (wiki / "beta.md").unlink()
    part = sync(tmp_path, store, keep_history=keep_history)
    assert (part.documents.indexed, part.documents.deleted, part.documents.unchanged) == (1, 1, 1)
    rows = list(store.rows_by_id.values())  # the whole collection, current or not
    parents = {r.chunk_id: r for r in rows if r.chunk_type == ChunkType.FULL_TEXT.value}
    for child in (r for r in rows if r.chunk_type == ChunkType.CHILD.value):
        parent = parents[child.parent_chunk_id]  # no orphan: every child's parent row is there
        assert (parent.is_current, parent.version_hash) == (child.is_current, child.version_hash)
    versions: dict[str, set[str]] = {}
    for row in rows:
        if row.is_current:
            versions.setdefault(row.title, set()).add(row.version_hash)
    assert set(versions) == {"Alpha", "Gamma"} and all(len(served) == 1 for served in versions.values())
    replaced = {chunk_id for chunk_id, row in first.items() if row.title in ("Alpha", "Beta")}
    kept = replaced if keep_history else set()  # history keeps them out of service; else they are deleted
    assert {chunk_id for chunk_id, row in store.rows_by_id.items() if not row.is_current} == kept
    assert not (replaced - kept) & set(store.rows_by_id)


def test_removing_most_of_a_source_is_refused_unless_allowed(tmp_path):
    for i in range(MASS_DELETE_FLOOR + 2):
        page(tmp_path / "wiki", f"page-{i}")
    store = InMemoryStore()
    sync(tmp_path, store)
    for i in range(2, MASS_DELETE_FLOOR + 2):  # as if the share were unmounted: 10 of 12 gone
        (tmp_path / "wiki" / f"page-{i}.md").unlink()
    refused = sync(tmp_path, store)
    (failure,) = refused.failures
    assert failure.document == SOURCE_FAILURE and "would remove 10 of its 12 indexed documents" in failure.error
    assert refused.documents.deleted == 0 and len(store.ledger("wiki")) == 12
    assert status(refused).status == "failed"
    allowed = sync(tmp_path, store, RunOptions(allow_mass_delete=True))
    assert allowed.documents.deleted == 10 and len(store.ledger("wiki")) == 2


def _unreadable(root: Path) -> None:
    (root / "broken.md").write_bytes(b"---\ntitle: [unclosed\n---\n# x\n")


def _too_many_tags(root: Path) -> None:  # readable, but its rows would not fit the collection
    page(root, "broken", tags=[f"t{i}" for i in range(65)])


@pytest.mark.parametrize(
    "write_broken, reason", [(_unreadable, "front matter is not valid YAML"), (_too_many_tags, "tags has 65 values")]
)
def test_a_broken_document_fails_alone_and_the_others_are_indexed(tmp_path, wiki, write_broken, reason):
    write_broken(wiki)
    store = InMemoryStore()
    part = sync(tmp_path, store)
    (failure,) = part.failures
    assert failure.document == "broken.md" and reason in failure.error
    assert (part.documents.seen, part.documents.indexed, part.documents.failed) == (4, 3, 1)
    assert set(documents(store)) == {"Alpha", "Beta", "Gamma"} and status(part).status == "partial"


def test_with_keep_history_superseded_and_deleted_versions_stay_marked_not_current(tmp_path, wiki):
    store = InMemoryStore()
    sync(tmp_path, store, keep_history=True)
    old = documents(store)
    page(wiki, "alpha", BODY + "\n\nA second paragraph.\n")
    (wiki / "beta.md").unlink()
    part = sync(tmp_path, store, keep_history=True)
    assert (part.documents.indexed, part.documents.deleted) == (1, 1)
    superseded = documents(store, current=False)
    assert superseded == {"Alpha": old["Alpha"], "Beta": old["Beta"]}
    assert all(store.rows_by_id[i].temporal_end != TEMPORAL_OPEN for ids in superseded.values() for i in ids)
    assert set(documents(store)) == {"Alpha", "Gamma"} and set(store.ledger("wiki")) == {
        r.document_id for r in store.rows_by_id.values() if r.is_current
    }


def test_a_document_the_store_refuses_fails_alone_and_the_next_run_writes_it(tmp_path, wiki):
    beta = next(r.document_id for r in _refs(wiki) if r.locator == "beta.md")
    store = InMemoryStore(refuse={beta})
    part = sync(tmp_path, store)
    (failure,) = part.failures
    assert failure.document == "beta.md" and "the index refused its rows: Refused" in failure.error
    assert (part.documents.indexed, part.documents.failed) == (2, 1) and set(documents(store)) == {"Alpha", "Gamma"}
    assert part.rows_written == len(store.rows_by_id)  # the refused document's rows are not counted as written
    store.refuse = frozenset()
    again = sync(tmp_path, store)
    assert (again.documents.indexed, again.failures) == (1, []) and set(documents(store)) == {"Alpha", "Beta", "Gamma"}


def _refs(root: Path) -> list[DocumentRef]:
    config = WikiSourceConfig(name="wiki", type="wiki", path=str(root), tenant="acme", acl=["sre"])
    return list(WikiSource(config).discover())


def test_the_no_op_check_stops_listing_at_the_first_document_to_index_and_then_removes_nothing(tmp_path, wiki):
    from cairn.flows.discovery import plan_source

    store = InMemoryStore()
    sync(tmp_path, store)
    config = load_config(tmp_path / "c.toml")

    def planned():
        state = SourceState(config.state_path)
        try:
            return plan_source(config.sources[0], config, store, state, RunOptions())
        finally:
            state.close()

    unchanged = planned()
    assert unchanged.found.complete and not unchanged.has_work and len(unchanged.plan.unchanged) == len(PAGES)
    (wiki / "gamma.md").unlink()
    removal = planned()  # a removal shows only once everything is listed
    assert removal.found.complete and removal.has_work and len(removal.plan.stale_document_ids) == 1
    page(wiki, "alpha", BODY + "\nOne more line.\n")
    edit = planned()
    assert not edit.found.complete and edit.has_work
    assert [r.document_id for r in edit.plan.to_index] == [edit.found.refs[-1].document_id]  # where it stopped
    assert edit.plan.stale_document_ids == []  # a partial listing never counts a document as gone


def test_a_source_another_run_wrote_while_it_was_listed_is_listed_again_before_it_is_written(tmp_path, wiki):
    """Sources list outside the writer slot: another run can write the same source in the meantime, from a later
    listing. The run then lists it again in its turn, and never writes its older listing over the newer rows."""
    from dataclasses import replace

    from cairn.flows.discovery import Discoverer

    store = InMemoryStore()
    sync(tmp_path, store)
    page(wiki, "alpha", BODY + "\n\nSecond edition.\n")  # what this run lists
    config = load_config(tmp_path / "c.toml")
    listings = []

    class MeanwhileAnotherRun(Discoverer):
        def run(self, source):
            found = super().run(source)
            listings.append(found)
            if len(listings) == 1:  # while this run had listed, and not yet written: another run, a later edit
                page(wiki, "alpha", BODY + "\n\nThird edition.\n")
                assert sync(tmp_path, store).documents.indexed == 1
            return found

    encoder = HashingEncoder()
    cache, state = EmbeddingCache(config.embedding.cache_path, encoder.dim), SourceState(config.state_path)
    try:
        steps = IngestSteps.bind(config, encoder, cache, store, InlineRunner())
        steps = replace(steps, discoverer=MeanwhileAnotherRun())
        run = RunContext(config, RunOptions(), store, state, steps=steps, progress=Silent())
        part = SourceSync(run, config.sources[0]).sync()
    finally:
        cache.close()
        state.close()
    assert len(listings) == 2  # listed again in its turn
    assert (part.documents.indexed, part.documents.unchanged) == (0, 3)
    alpha = [r.text for r in store.rows_by_id.values() if r.title == "Alpha" and r.is_current]
    assert any("Third edition." in text for text in alpha) and not any("Second edition." in text for text in alpha)


def test_a_missing_folder_is_a_failed_source_with_its_one_line_not_a_failed_document(tmp_path, capsys):
    """#50: it was "0 seen ... 1 failed", a document failure no document had."""
    from cairn.cli.exits import Outcome
    from cairn.cli.ingest import print_run_report
    from cairn.schemas.run_report import DocumentCounts

    part = sync(tmp_path, InMemoryStore(), path=str(tmp_path / "gone"))
    (failure,) = part.failures
    assert failure.document == SOURCE_FAILURE and part.documents == DocumentCounts()
    report = RunReport(run_id="r")
    report.close_source("wiki", part)
    assert report.failed_sources == ["wiki"] and report.per_source["wiki"].status == "failed"
    assert print_run_report(report, as_json=False) is Outcome.SOURCES_FAILED
    out, err = capsys.readouterr()
    assert "documents: 0 seen, 0 indexed, 0 unchanged, 0 skipped, 0 deleted, 0 failed; sources: 1 of 1 failed" in out
    (line,) = err.strip().splitlines()  # the source's one line
    assert line.startswith("FAILED source 'wiki'") and str(tmp_path / "gone") in line
