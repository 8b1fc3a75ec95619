"""index.memory.InMemoryStore keeps MilvusStore's semantics: the same writes, retirements and deletes by chunk id
on both (Milvus Lite here) leave the same rows, current and superseded, and the same ledger."""

from __future__ import annotations

import copy
from pathlib import Path

from cairn.flows.steps import Chunker, Embedder
from cairn.index.cache import EmbeddingCache
from cairn.index.ledger import IndexedDocument
from cairn.index.memory import InMemoryStore
from cairn.index.protocol import IndexStore
from cairn.index.store import MilvusStore
from cairn.schemas import ChunkType
from cairn.schemas.config import ChunkingConfig, MilvusConfig, WikiSourceConfig
from cairn.sources.wiki import WikiSource
from tests.conftest import write_page
from tests.encoders import HashingEncoder

BODY = "# {title}\n\n" + "Drain the {title} queue, restart its worker and confirm the lag falls below 100. " * 30
EDITED = BODY + "\n\n## Escalation\n\nPage the database on-call when the lag does not fall within the hour.\n"


def rows_of(root: Path, name: str, body: str, cache: EmbeddingCache) -> list[dict]:
    """The rows an ingest writes for wiki page `name` with `body`."""
    write_page(root, f"{name}.md", body.format(title=name.title()))
    source = WikiSource(WikiSourceConfig(name="wiki", type="wiki", path=str(root), tenant="acme", acl=["sre"]))
    refs = [ref for ref in source.discover() if ref.locator == f"{name}.md"]
    chunked = Chunker(ChunkingConfig()).run(source, refs)
    rows, _ = Embedder(HashingEncoder(), cache, 8).run(chunked.documents)
    return rows


def apply(store: IndexStore, history: list[tuple[str, tuple]]) -> None:
    for verb, args in history:
        getattr(store, verb)(*copy.deepcopy(args))
    store.flush()


def ledger(store: IndexStore) -> dict[str, IndexedDocument]:
    found = store.ledger("wiki")
    for document in found.values():
        document.orphans.sort()  # the order rows are read in is the store's
    return found


def test_the_same_writes_leave_the_same_rows_and_ledger_in_memory_and_in_milvus(tmp_path):
    root, cache = tmp_path / "wiki", EmbeddingCache(tmp_path / "embeddings.sqlite", HashingEncoder().dim)
    first = {name: rows_of(root, name, BODY, cache) for name in ("alpha", "beta", "gamma", "delta")}
    edited = {name: rows_of(root, name, EDITED, cache) for name in ("alpha", "beta")}
    cache.close()

    def document(name: str) -> str:
        return first[name][0]["document_id"]

    def ids(name: str) -> list[str]:  # the rows of its first version, as the ledger lists them when it is edited
        return [row["chunk_id"] for row in first[name]]

    gamma_children = [r for r in first["gamma"] if r["chunk_type"] == ChunkType.CHILD.value]
    gamma_child = gamma_children[0]["chunk_id"]
    orphan = dict(gamma_children[1], chunk_id="orphan", parent_chunk_id="gone")
    history = [
        ("upsert", ([row for rows in first.values() for row in rows],)),
        ("upsert", (edited["alpha"],)),  # a new version, the old one deleted by id
        ("retire_chunks", (ids("alpha"), False, 1_800_000_000)),
        ("upsert", (edited["beta"],)),  # a new version, the old one kept as history
        ("retire_chunks", (ids("beta") + ["no-such-row"], True, 1_800_000_000)),
        ("delete_chunks", ([gamma_child, "no-such-row"],)),  # gamma: now a child short of complete
        ("retire_chunks", (ids("delta"), True, 1_800_000_100)),  # more rows than a write batch: several calls
        ("retire_chunks", (ids("delta")[:2], True, 1_900_000_000)),  # a retry: the earlier end is kept
        ("upsert", ([orphan],)),  # a child whose parent row is not there
    ]
    memory = InMemoryStore()
    apply(memory, history)
    config = MilvusConfig(uri=str(tmp_path / "index" / "cairn.db"), collection="memory_check", write_batch_rows=4)
    assert len(ids("delta")) > config.write_batch_rows
    milvus = MilvusStore(config, dim=16)
    try:
        milvus.ensure_collection()
        apply(milvus, history)
        in_milvus = {
            r["chunk_id"]: (r["is_current"], r["temporal_end"])
            for r in milvus.iterate("", ["chunk_id", "is_current", "temporal_end"])
        }
        milvus_ledger = ledger(milvus)
    finally:
        milvus.close()

    assert {chunk_id: (r["is_current"], r["temporal_end"]) for chunk_id, r in memory.rows.items()} == in_milvus
    assert ledger(memory) == milvus_ledger
    assert set(milvus_ledger) == {document("alpha"), document("beta"), document("gamma")}  # delta: history only
    assert milvus_ledger[document("alpha")].complete_version == edited["alpha"][0]["version_hash"]
    assert "1 child rows missing" in milvus_ledger[document("gamma")].problems()
    assert milvus_ledger[document("gamma")].orphans == ["orphan"] and gamma_child not in in_milvus
    assert in_milvus[edited["beta"][0]["chunk_id"]] == (True, edited["beta"][0]["temporal_end"])
    assert sum(not current for current, _ in in_milvus.values()) == len(first["beta"]) + len(first["delta"])
    assert {in_milvus[chunk_id] for chunk_id in ids("delta")} == {(False, 1_800_000_100)}
    assert not set(ids("alpha")) & set(in_milvus) and "no-such-row" not in in_milvus
