from index.sync import plan_sync
from schemas import DocumentRef


def ref(doc: str, version: str) -> DocumentRef:
    return DocumentRef("wiki", f"{doc}.md", doc, version)


def test_same_version_is_unchanged_and_new_version_reindexed():
    plan = plan_sync([ref("a", "v1"), ref("b", "v2")], {"a": {"v1"}, "b": {"v1"}})
    assert [r.document_id for r in plan.unchanged] == ["a"]
    assert [r.document_id for r in plan.to_index] == ["b"]


def test_leftover_second_version_sends_document_back_through_indexing():
    plan = plan_sync([ref("a", "v2")], {"a": {"v1", "v2"}})
    assert [r.document_id for r in plan.to_index] == ["a"]


def test_documents_gone_from_source_are_stale_unless_kept_or_cleanup_off():
    indexed = {"a": {"v1"}, "gone": {"v1"}, "unreadable": {"v1"}}
    plan = plan_sync([ref("a", "v1")], indexed, keep_ids={"unreadable"})
    assert plan.stale_document_ids == ["gone"]
    assert plan_sync([ref("a", "v1")], indexed, cleanup=False).stale_document_ids == []
