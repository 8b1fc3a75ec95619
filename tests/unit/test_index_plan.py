from collections import Counter

from cairn.index.ledger import IndexedDocument
from cairn.index.plan import plan_sync
from cairn.schemas import DocumentRef


def ref(doc: str, version: str) -> DocumentRef:
    return DocumentRef("wiki", f"{doc}.md", doc, version)


def indexed(
    doc: str,
    *versions: str,
    sections: int = 2,
    children: int = 3,
    drop_child: bool = False,
    drop_parent: bool = False,
    orphan: bool = False,
) -> IndexedDocument:
    """A ledger entry as read_ledger builds it: `sections` parents per version with `children` each."""
    state = IndexedDocument(doc)
    for version in versions:
        state.versions.add(version)
        for s in range(sections):
            if drop_parent and s == 0:
                continue
            cid = f"{doc}-{version}-{s}"
            state.parents[cid] = (version, sections, children)
            state.children_per_parent[cid] = children
    if drop_child:
        first = next(iter(state.parents))
        state.children_per_parent[first] -= 1
    if orphan:
        state.orphans.append("orphan-child")
    return state


def ledger(*docs: IndexedDocument) -> dict:
    return {d.document_id: d for d in docs}


def test_same_complete_version_is_unchanged_and_new_version_reindexed():
    plan = plan_sync([ref("a", "v1"), ref("b", "v2")], ledger(indexed("a", "v1"), indexed("b", "v1")))
    assert [r.document_id for r in plan.unchanged] == ["a"]
    assert [r.document_id for r in plan.to_index] == ["b"]


def test_anything_left_by_an_interrupted_run_sends_the_document_back_through_indexing():
    for broken in (
        indexed("a", "v1", "v2"),  # new version written, old one not yet removed
        indexed("a", "v2", drop_parent=True),  # killed while writing parents
        indexed("a", "v2", drop_child=True),  # a child row deleted behind our back
        indexed("a", "v2", orphan=True),  # a child whose parent is gone
    ):
        plan = plan_sync([ref("a", "v2")], ledger(broken))
        assert [r.document_id for r in plan.to_index] == ["a"], broken.problems()
        assert broken.complete_version is None and broken.problems()


def test_documents_gone_from_source_are_stale_unless_kept_or_cleanup_off():
    state = ledger(indexed("a", "v1"), indexed("gone", "v1"), indexed("unreadable", "v1"))
    plan = plan_sync([ref("a", "v1")], state, keep_ids={"unreadable"})
    assert plan.stale_document_ids == ["gone"]
    assert plan_sync([ref("a", "v1")], state, cleanup=False).stale_document_ids == []


def test_orphan_only_documents_are_stale_too():
    orphaned = IndexedDocument("ghost", versions={"v1"}, orphans=["c1"], children_per_parent=Counter())
    assert plan_sync([], ledger(orphaned)).stale_document_ids == ["ghost"]


def test_force_reprocesses_unchanged_documents():
    plan = plan_sync([ref("a", "v1"), ref("b", "v1")], ledger(indexed("a", "v1"), indexed("b", "v1")), force={"b"})
    assert [r.document_id for r in plan.to_index] == ["b"]
    assert [r.document_id for r in plan.unchanged] == ["a"]


def test_a_write_of_one_version_retires_the_ledger_rows_of_every_other_version_orphans_included():
    doc = IndexedDocument("a", versions={"v1", "v2"})
    doc.rows = {"p1": "v1", "c1": "v1", "orphan-v1": "v1", "p2": "v2", "c2": "v2", "c2-old-chunking": "v2"}
    assert doc.superseded("v2") == ["c1", "orphan-v1", "p1"]
    assert doc.leftovers("v2", written={"p2", "c2"}) == ["c2-old-chunking"]  # its own version's debris
    assert doc.superseded("v3") == sorted(doc.rows)  # a brand-new version replaces every row
