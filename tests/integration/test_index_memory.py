"""index.memory.InMemoryStore keeps Milvus's semantics, both halves: the same writes, retirements and deletes by chunk
id on both (Milvus Lite here) leave the same rows, current and superseded, and the same ledger; the same questions
and filters find the same rows (the conformance of the two IndexReaders)."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path

from cairn.flows.steps import Chunker, Embedder
from cairn.index.cache import EmbeddingCache
from cairn.index.ledger import IndexedDocument
from cairn.index.memory import InMemoryStore
from cairn.index.protocol import IndexReader, IndexStore
from cairn.index.store import MilvusStore
from cairn.query import Principal, Retriever
from cairn.query.filters import access_of
from cairn.schemas import ChunkType
from cairn.schemas.config import ChunkingConfig, MilvusConfig, QueryConfig, WikiSourceConfig
from cairn.schemas.rows import ChunkRow, ScoredRow
from cairn.sources.wiki import WikiSource
from tests.conftest import write_page
from tests.encoders import HashingEncoder
from tests.query_corpus import DAY, SRE, T0, corpus_rows

BODY = "# {title}\n\n" + "Drain the {title} queue, restart its worker and confirm the lag falls below 100. " * 30
EDITED = BODY + "\n\n## Escalation\n\nPage the database on-call when the lag does not fall within the hour.\n"


def rows_of(root: Path, name: str, body: str, cache: EmbeddingCache) -> list[ChunkRow]:
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
        return first[name][0].document_id

    def ids(name: str) -> list[str]:  # the rows of its first version, as the ledger lists them when it is edited
        return [row.chunk_id for row in first[name]]

    gamma_children = [r for r in first["gamma"] if r.chunk_type == ChunkType.CHILD.value]
    gamma_child = gamma_children[0].chunk_id
    orphan = replace(gamma_children[1], chunk_id="orphan", parent_chunk_id="gone")
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
            r.chunk_id: (r.is_current, r.temporal_end)
            for r in milvus.iterate("", ["chunk_id", "is_current", "temporal_end"])
        }
        milvus_ledger = ledger(milvus)
    finally:
        milvus.close()

    assert {chunk_id: (r.is_current, r.temporal_end) for chunk_id, r in memory.rows_by_id.items()} == in_milvus
    assert ledger(memory) == milvus_ledger
    assert set(milvus_ledger) == {document("alpha"), document("beta"), document("gamma")}  # delta: history only
    assert milvus_ledger[document("alpha")].complete_version == edited["alpha"][0].version_hash
    assert "1 child rows missing" in milvus_ledger[document("gamma")].problems()
    assert milvus_ledger[document("gamma")].orphans == ["orphan"] and gamma_child not in in_milvus
    assert in_milvus[edited["beta"][0].chunk_id] == (True, edited["beta"][0].temporal_end)
    assert sum(not current for current, _ in in_milvus.values()) == len(first["beta"]) + len(first["delta"])
    assert {in_milvus[chunk_id] for chunk_id in ids("delta")} == {(False, 1_800_000_100)}
    assert not set(ids("alpha")) & set(in_milvus) and "no-such-row" not in in_milvus


# ---- the reading half: the same questions through both readers -------------------------------------------------
QUESTIONS = [
    "how do I promote the ledger-db replica when the primary is lost",
    "restart the invoice worker and watch the queue drain",
    "rotate the card vault key",
    "verify replication on the new primary",
]
WHERE = {
    "sre": access_of(SRE, None).narrowed(chunk_type="child"),
    "payments": access_of(Principal("acme", ["payments"]), None).narrowed(chunk_type="child"),
    "globex": access_of(Principal("globex", ["sre"]), None).narrowed(chunk_type="child"),
    "a month ago": access_of(SRE, T0 - DAY).narrowed(chunk_type="child"),
    "doc_tag": access_of(SRE, None).narrowed(chunk_type="child", doc_tag="ledger"),
    "service": access_of(SRE, None).narrowed(chunk_type="child", metadata=(("service_name", ("invoice",)),)),
}


def test_both_readers_find_the_same_rows_for_the_same_questions_and_filters(tmp_path):
    """What both engines must agree on: which rows a filter lets through (membership, every search with a limit
    above the row count), the best row where it leads by a clear margin (HNSW and brute force; Milvus's BM25 and
    index/memory.py's), the parents read by id and around a section, and the whole pipeline's top answer."""
    rows = corpus_rows(tmp_path)
    memory = InMemoryStore()
    memory.upsert(copy.deepcopy(rows))
    config = MilvusConfig(uri=str(tmp_path / "index" / "cairn.db"))
    milvus = MilvusStore(config, dim=HashingEncoder().dim)
    milvus.ensure_collection()
    milvus.upsert(copy.deepcopy(rows))
    milvus.flush()
    encoder, everything = HashingEncoder(), len(rows) + 10
    try:
        readers: list[IndexReader] = [memory, milvus.reader]
        for name, where in WHERE.items():
            for question in QUESTIONS:
                vector = encoder.encode_queries([question]).tolist()
                dense = [r.search_dense("full_text_embedding", vector, where, everything)[0] for r in readers]
                assert {h.row.chunk_id for h in dense[0]} == {h.row.chunk_id for h in dense[1]}, (name, question)
                assert _leader(dense[0]) in (None, _leader(dense[1])), (name, question)
                bm25 = [r.search_bm25(question, where, everything) for r in readers]
                assert {h.row.chunk_id for h in bm25[0]} == {h.row.chunk_id for h in bm25[1]}, (name, question)
                assert _leader(bm25[0]) in (None, _leader(bm25[1])), (name, question)
                assert readers[0].any_row(where) == readers[1].any_row(where)
        parents = sorted(r.chunk_id for r in rows if r.is_parent)
        assert [sorted(p.chunk_id for p in r.rows(parents)) for r in readers] == [parents, parents]
        seeds = [r for r in rows if r.is_parent]
        access = access_of(SRE, None)
        assert len({tuple(sorted(n.chunk_id for n in r.neighbours(seeds, access))) for r in readers}) == 1
        documents = {r.document_id for r in rows}
        assert readers[0].children_per_document(documents, access) == readers[1].children_per_document(
            documents, access
        )
        assert readers[0].counts() == readers[1].counts()

        answers = [
            Retriever(config, QueryConfig(), encoder, client=reader).retrieve(question, SRE, k=3)
            for reader in readers
            for question in QUESTIONS
        ]
        half = len(QUESTIONS)
        for in_memory, in_milvus in zip(answers[:half], answers[half:]):
            assert (in_memory.status, in_memory.empty_reason) == (in_milvus.status, in_milvus.empty_reason)
            assert [h.chunk_id for h in in_memory.hits[:1]] == [h.chunk_id for h in in_milvus.hits[:1]]
    finally:
        milvus.close()


def _leader(hits: list[ScoredRow], margin: float = 0.05) -> str | None:
    """The best row when it leads the next by `margin` (relative), else None: engines may order near-ties apart."""
    if not hits:
        return None
    if len(hits) > 1 and hits[0].score - hits[1].score < margin * abs(hits[0].score):
        return None
    return hits[0].row.chunk_id
