"""One document that cannot become rows fails alone, named with its reason, and the rest of its batch is
indexed; nothing is clipped to fit."""

from __future__ import annotations

import pytest

from cairn.flows.ingest import ingest_flow
from cairn.index.store import MilvusStore
from cairn.schemas.config import load_config
from cairn.schemas.fields import ARRAY_FIELDS, ARRAY_ITEM_LENGTH
from tests.conftest import write_config, write_page

BODY = "# {title}\n\n" + "Drain the queue, restart the worker and confirm the lag falls below one hundred. " * 30 + "\n"


def test_documents_whose_metadata_would_not_fit_fail_alone_and_the_batch_is_indexed(tmp_path, prefect_server):
    root = tmp_path / "wiki"
    write_page(root, "good-1.md", BODY.format(title="Good one"))
    write_page(
        root, "too-many-tags.md", BODY.format(title="Tags"), tags=[f"t{i}" for i in range(ARRAY_FIELDS["tags"] + 1)]
    )
    write_page(root, "long-tag.md", BODY.format(title="Long tag"), tags=["x" * (ARRAY_ITEM_LENGTH + 1)])
    write_page(root, "long-doc-tag.md", BODY.format(title="Doc tag"), doc_tag="d" * 300)
    write_page(root, "good-2.md", BODY.format(title="Good two"))
    config = write_config(
        tmp_path / "c.toml",
        tmp_path / "index",
        [
            {"name": "w", "type": "wiki", "path": str(root), "tenant": "acme", "acl": ["sre"]},
        ],
    )
    report = ingest_flow(config_path=str(config))
    failures = {f["document"]: f["error"] for f in report["failures"]}
    assert set(failures) == {"too-many-tags.md", "long-tag.md", "long-doc-tag.md"}, failures
    assert "tags has 65 values" in failures["too-many-tags.md"]
    assert "tags value" in failures["long-tag.md"] and "doc_tag is 300 bytes" in failures["long-doc-tag.md"]
    assert report["documents"]["indexed"] == 2 and report["documents"]["failed"] == 3
    assert report["documents"]["seen"] == 5

    store = MilvusStore(load_config(config).milvus, dim=384)
    store.load()
    titles = {row.title for row in store.iterate("", ["title"])}
    store.close()
    assert titles == {"Good one", "Good two"}


def test_a_run_that_would_remove_most_of_a_source_removes_nothing_unless_told(tmp_path, prefect_server):
    from cairn.errors import SourcesFailed

    root = tmp_path / "wiki"
    for i in range(12):
        write_page(root, f"page-{i}.md", BODY.format(title=f"Page {i}"))
    config = write_config(
        tmp_path / "c.toml",
        tmp_path / "index",
        [
            {"name": "w", "type": "wiki", "path": str(root), "tenant": "acme", "acl": ["sre"]},
        ],
    )
    assert ingest_flow(config_path=str(config))["documents"]["indexed"] == 12
    for i in range(2, 12):  # as if the share were unmounted: 10 of 12 gone
        (root / f"page-{i}.md").unlink()
    with pytest.raises(SourcesFailed) as refused:
        ingest_flow(config_path=str(config))
    (failure,) = refused.value.report["failures"]
    assert failure["document"] == "*" and "would remove 10 of its 12 indexed documents" in failure["error"]
    assert "--allow-mass-delete" in failure["error"] and refused.value.report["documents"]["deleted"] == 0
    assert len({r.document_id for r in _rows(config)}) == 12  # nothing lost

    allowed = ingest_flow(config_path=str(config), allow_mass_delete=True)
    assert allowed["documents"]["deleted"] == 10 and len({r.document_id for r in _rows(config)}) == 2


def _rows(config) -> list[dict]:
    store = MilvusStore(load_config(config).milvus, dim=384)
    store.load()
    try:
        return list(store.iterate("", ["document_id"]))
    finally:
        store.close()


def test_a_permission_change_takes_effect_at_the_next_run_and_embeds_nothing(tmp_path, prefect_server):
    from cairn.query import Principal, Retriever

    root = tmp_path / "wiki"
    write_page(root, "drain.md", BODY.format(title="Drain the queue"))
    source = {"name": "w", "type": "wiki", "path": str(root), "tenant": "acme", "acl": ["sre"]}
    config = write_config(tmp_path / "c.toml", tmp_path / "index", [source])
    ingest_flow(config_path=str(config))

    def hits(group: str) -> int:
        retriever = Retriever.from_config(config)
        try:
            return len(
                retriever.retrieve("how do I drain the queue and restart the worker", Principal("acme", [group])).hits
            )
        finally:
            retriever.close()

    assert hits("sre") > 0 and hits("oncall") == 0
    write_config(tmp_path / "c.toml", tmp_path / "index", [dict(source, acl=["oncall"])])  # sre revoked, oncall granted
    report = ingest_flow(config_path=str(config))
    assert report["documents"]["indexed"] == 1 and report["embeddings_computed"] == 0
    assert hits("oncall") > 0 and hits("sre") == 0


def test_a_small_source_that_lists_nothing_at_all_is_not_emptied(tmp_path, prefect_server):
    from cairn.errors import SourcesFailed

    root = tmp_path / "wiki"
    for i in range(2):
        write_page(root, f"page-{i}.md", BODY.format(title=f"Page {i}"))
    config = write_config(
        tmp_path / "c.toml",
        tmp_path / "index",
        [
            {"name": "w", "type": "wiki", "path": str(root), "tenant": "acme", "acl": ["sre"]},
        ],
    )
    ingest_flow(config_path=str(config))
    for page in root.glob("*.md"):
        page.unlink()  # an empty mount point: the folder exists, nothing in it
    with pytest.raises(SourcesFailed, match="failed: w"):
        ingest_flow(config_path=str(config))
    assert len({r.document_id for r in _rows(config)}) == 2


def refuse_rows(monkeypatch, refused) -> None:
    """Fault injection on the real store: Milvus refuses any upsert holding a row for which `refused(row)`
    holds, as a server refuses a request it cannot take (nothing of that request lands)."""
    from pymilvus.exceptions import MilvusException

    upsert = MilvusStore.upsert

    def guarded(self, rows):
        if any(refused(row) for row in rows):
            raise MilvusException(code=1100, message="request refused by the injected fault")
        return upsert(self, rows)

    monkeypatch.setattr(MilvusStore, "upsert", guarded)


@pytest.mark.core
def test_a_document_the_index_refuses_fails_alone_and_is_written_by_the_next_run(tmp_path, prefect_server, monkeypatch):
    root = tmp_path / "wiki"
    for name in ("first", "poison", "last"):
        write_page(root, f"{name}.md", BODY.format(title=name.title()))
    config = write_config(
        tmp_path / "c.toml",
        tmp_path / "index",
        [
            {"name": "w", "type": "wiki", "path": str(root), "tenant": "acme", "acl": ["sre"]},
        ],
    )
    with monkeypatch.context() as patch:
        refuse_rows(patch, lambda row: row.title == "Poison")
        report = ingest_flow(config_path=str(config))
    (failure,) = report["failures"]
    assert failure["document"] == "poison.md" and "the index refused its rows: MilvusException" in failure["error"]
    assert report["documents"]["indexed"] == 2 and report["documents"]["failed"] == 1
    assert report["per_source"]["w"]["status"] == "partial"
    rows = _rows(config)
    assert len({r.document_id for r in rows}) == 2
    assert report["rows_written"] == len(rows)  # the refused document's rows are not counted as written

    again = ingest_flow(config_path=str(config))  # the fault gone: the next run writes what was refused
    assert again["documents"]["indexed"] == 1 and again["failures"] == []
    assert len({r.document_id for r in _rows(config)}) == 3


def test_a_store_that_refuses_a_whole_source_fails_that_source_and_not_the_other(tmp_path, prefect_server, monkeypatch):
    from cairn.errors import SourcesFailed

    sources = []
    for name in ("good", "bad"):
        root = tmp_path / name
        write_page(root, "a.md", BODY.format(title=f"{name} a"))
        write_page(root, "b.md", BODY.format(title=f"{name} b"))
        sources.append({"name": name, "type": "wiki", "path": str(root), "tenant": "acme", "acl": ["sre"]})
    config = write_config(tmp_path / "c.toml", tmp_path / "index", sources)
    refuse_rows(monkeypatch, lambda row: row.source_name == "bad")
    with pytest.raises(SourcesFailed, match="failed: bad") as failed:
        ingest_flow(config_path=str(config))
    report = failed.value.report
    assert report["per_source"]["good"]["status"] == "ok" and report["per_source"]["good"]["indexed"] == 2
    assert report["per_source"]["bad"]["status"] == "failed"
    assert "injected fault" in report["per_source"]["bad"]["error"]
    assert {r.document_id for r in _rows(config)} and len({r.document_id for r in _rows(config)}) == 2


def test_a_store_that_is_down_is_not_asked_once_per_document(tmp_path, prefect_server, monkeypatch):
    """The batch write fails, then the first documents alone fail the same way: the store is blamed after
    STORE_DOWN_AFTER of them, not asked for each of the batch's documents (each would wait for its timeout)."""
    from pymilvus.exceptions import MilvusException

    from cairn.errors import SourcesFailed
    from cairn.flows.steps import STORE_DOWN_AFTER, WRITE_RETRIES

    root = tmp_path / "wiki"
    for i in range(8):
        write_page(root, f"page-{i}.md", BODY.format(title=f"Page {i}"))
    config = write_config(
        tmp_path / "c.toml",
        tmp_path / "index",
        [
            {"name": "w", "type": "wiki", "path": str(root), "tenant": "acme", "acl": ["sre"]},
        ],
    )
    calls = []

    def down(self, rows):
        calls.append(len(rows))
        raise MilvusException(code=2, message="connection refused (injected)")

    monkeypatch.setattr(MilvusStore, "upsert", down)
    with pytest.raises(SourcesFailed, match="failed: w") as failed:
        ingest_flow(config_path=str(config))
    attempts = WRITE_RETRIES.attempts  # the write task's own attempts (flows/tasks.py task_retries)
    assert len(calls) == attempts * (1 + STORE_DOWN_AFTER)  # per attempt: the batch, then 3 documents, not 8
    assert "connection refused (injected)" in failed.value.report["per_source"]["w"]["error"]
