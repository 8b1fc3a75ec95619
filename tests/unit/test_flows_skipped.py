"""Documents with nothing to index (an empty file, a page of front matter only) are skipped with a reason, not
failed; remembered by version so that an unchanged re-run does not read them again; indexed once they get content.
Run as tests/unit/test_flows_sync.py runs a source: an InMemoryStore, the inline runner, a hashing encoder."""

from __future__ import annotations

from cairn.index.memory import InMemoryStore
from cairn.index.plan import Expected, plan_sync
from cairn.schemas import DocumentRef
from cairn.schemas.run_report import RunReport, SourceReport
from tests.conftest import write_page
from tests.unit.test_flows_sync import BODY, documents, page, sync

HUGO_SECTION = "---\ntitle: Runbooks\nbookHidden: true\n---\n"
ARCHETYPE = '---\ntitle: "{{ replace .Name "-" " " | title }}"\ndate: {{ .Date }}\ndraft: true\n---\n\n'


def accounted(part: SourceReport) -> bool:
    d = part.documents
    return d.seen == d.indexed + d.unchanged + d.skipped + d.failed


def wiki_with_section_pages(tmp_path):
    for name in ("alpha", "beta"):
        page(tmp_path / "wiki", name)
    (tmp_path / "wiki" / "_index.md").write_text(HUGO_SECTION, encoding="utf-8")
    (tmp_path / "wiki" / "archetypes").mkdir()
    (tmp_path / "wiki" / "archetypes" / "default.md").write_text(ARCHETYPE, encoding="utf-8")
    (tmp_path / "wiki" / "blank.md").write_text("\n\n", encoding="utf-8")


def test_pages_with_nothing_to_index_are_skipped_with_their_reason_and_the_source_is_ok(tmp_path):
    wiki_with_section_pages(tmp_path)
    part = sync(tmp_path, InMemoryStore())
    d = part.documents
    assert (d.seen, d.indexed, d.skipped, d.failed) == (5, 2, 3, 0) and accounted(part)
    reasons = {s.document: s.reason for s in part.skipped}
    assert set(reasons) == {"_index.md", "archetypes/default.md", "blank.md"} and all(s.read for s in part.skipped)
    assert "front matter only" in reasons["_index.md"] and "front matter only" in reasons["archetypes/default.md"]
    assert "empty file" in reasons["blank.md"]
    report = RunReport(run_id="test")
    report.close_source("wiki", part)
    assert report.per_source["wiki"].status == "ok" and report.per_source["wiki"].documents.skipped == 3
    assert report.to_dict()["skipped"][0].keys() == {"source", "document", "reason", "read"}


def test_a_skipped_page_is_not_read_again_while_its_version_stands(tmp_path):
    wiki_with_section_pages(tmp_path)
    store = InMemoryStore()
    sync(tmp_path, store)
    again = sync(tmp_path, store)
    d = again.documents
    assert (d.seen, d.unchanged, d.skipped, d.indexed) == (5, 2, 3, 0) and accounted(again)
    assert not any(s.read for s in again.skipped)  # planned as skipped from the state: never loaded
    assert {s.document: s.reason for s in again.skipped}["_index.md"].startswith("front matter only")


def test_a_skipped_page_that_gets_content_is_indexed(tmp_path):
    wiki_with_section_pages(tmp_path)
    store = InMemoryStore()
    sync(tmp_path, store)
    (tmp_path / "wiki" / "_index.md").write_text(HUGO_SECTION + BODY.format(title="Section"), encoding="utf-8")
    part = sync(tmp_path, store)
    assert (part.documents.indexed, part.documents.skipped) == (1, 2) and accounted(part)
    assert "Runbooks" in documents(store)  # its front matter's title


def test_a_page_emptied_after_it_was_indexed_leaves_the_collection(tmp_path):
    page(tmp_path / "wiki", "alpha")
    page(tmp_path / "wiki", "beta")
    store = InMemoryStore()
    sync(tmp_path, store)
    write_page(tmp_path / "wiki", "alpha.md", "", title="Alpha")  # front matter only now
    part = sync(tmp_path, store)
    assert (part.documents.skipped, part.documents.failed) == (1, 0) and accounted(part)
    assert set(documents(store)) == {"Beta"}  # the emptied page is no longer served
    again = sync(tmp_path, store)
    assert (again.documents.skipped, again.documents.indexed) == (1, 0) and not again.skipped[0].read


def test_the_plan_skips_a_remembered_version_only_while_the_collection_lacks_it_and_nothing_forces_it():
    ref = DocumentRef("wiki", "_index.md", "doc-1", "v1")
    assert plan_sync([ref], {}, expected=Expected(skipped={"doc-1": "v1"})).skipped == [ref]
    assert plan_sync([ref], {}, expected=Expected(skipped={"doc-1": "v0"})).missing == [ref]  # a new version is read
    assert plan_sync([ref], {}, expected=Expected(skipped={"doc-1": "v1"}), force={"doc-1"}).missing == [
        ref
    ]  # a backfill reads it
