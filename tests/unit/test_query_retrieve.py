"""Retriever.retrieve(), the whole query pipeline, on the in-memory reader (index/memory.py InMemoryStore): rows built
by the real chunker and row builder from hand-made documents, embedded by a hashing encoder. What a question gets
(hits, citations, blocks, the tier), who may read what (tenant, ACL, time), the scope (doc_tag, filters), and why
an answer is empty: in milliseconds, with no Milvus, model or Prefect."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from cairn.index.memory import InMemoryStore
from cairn.query import Principal, Retriever
from cairn.query.pipeline import STEPS
from cairn.schemas.config import MilvusConfig, QueryConfig
from tests.encoders import HashingEncoder
from tests.query_corpus import DAY, SRE, T0, corpus_rows


@pytest.fixture
def store(tmp_path: Path) -> InMemoryStore:
    memory = InMemoryStore()
    memory.upsert(corpus_rows(tmp_path))
    return memory


@pytest.fixture
def retriever(store: InMemoryStore) -> Retriever:
    return Retriever(MilvusConfig(), QueryConfig(), HashingEncoder(), client=store)


def test_a_question_gets_the_section_that_answers_it_cited_and_packed(retriever):
    result = retriever.retrieve("how do I promote the ledger-db replica when the primary is lost", SRE, k=3)
    assert result.status == "ok" and result.hits
    top = result.hits[0]
    assert top.title == "Ledger failover" and "pg_ctl promote" in top.text
    assert top.citation.startswith("Ledger failover") and "tenant acme" in top.citation
    assert top.citation.endswith("file:///wiki/ledger-failover.md#ledger-failover")
    assert result.blocks and "pg_ctl promote" in " ".join(b.text for b in result.blocks)
    assert result.confidence in ("HIGH", "MEDIUM", "LOW")


def test_only_the_principals_tenant_and_groups_are_read(retriever):
    question = "rotate the card vault key with the vault rotate command"
    assert all(h.title != "Card vault rotation" for h in retriever.retrieve(question, SRE).hits)
    payments = retriever.retrieve(question, Principal("acme", ["payments"]))
    assert payments.hits and {h.title for h in payments.hits} == {"Card vault rotation"}
    globex = retriever.retrieve("promote the ledger-db replica with pg_ctl promote", Principal("globex", ["sre"]))
    assert globex.hits and {h.tenant for h in globex.hits} == {"globex"}


def test_as_of_answers_with_what_was_valid_then(retriever):
    question = "how do I restart the invoice worker"
    now = retriever.retrieve(question, SRE, k=1)
    then = retriever.retrieve(question, SRE, k=1, as_of=T0 - DAY)
    assert "systemctl restart invoice-worker" in now.hits[0].text
    assert "legacy supervisor script" in then.hits[0].text and then.hits[0].version_hash != now.hits[0].version_hash


def test_doc_tag_and_filters_narrow_the_search(retriever):
    question = "restart the worker and watch the queue drain"
    assert {h.title for h in retriever.retrieve(question, SRE, filters={"service_name": "invoice"}).hits} == {
        "Invoice worker"
    }
    scoped = retriever.retrieve("verify replication on the new primary", SRE, doc_tag="ledger")
    assert scoped.hits and {h.doc_tag for h in scoped.hits} == {"ledger"}
    out_of_scope = retriever.retrieve(question, SRE, filters={"service_name": "no-such-service"})
    assert (out_of_scope.status, out_of_scope.empty_reason) == ("no_results", "out_of_scope")


def test_an_empty_answer_says_why(retriever):
    vague = retriever.retrieve("help", SRE)
    assert (vague.status, vague.empty_reason, vague.hits) == ("guidance", "too_vague", [])
    nobody = retriever.retrieve("promote the ledger-db replica with pg_ctl", Principal("initech", ["sre"]))
    assert (nobody.status, nobody.empty_reason) == ("no_results", "no_access")


def test_the_conductor_times_each_step_that_ran_and_gathers_each_steps_notes(retriever):
    result = retriever.retrieve("how do I promote the ledger-db replica", SRE, k=3)
    names = {name for name, _ in STEPS}
    timings = result.diagnostics["timings_ms"]
    assert set(timings) - {"total"} <= names and {"gate", "embed", "search", "fetch", "account"} <= set(timings)
    chunks = result.diagnostics["chunks"]  # rule 18: every stage's count, gathered from the steps that made them
    assert list(chunks) == ["searched", "passed_floors", "sections", "gated", "expanded", "selected", "returned"]
    assert chunks["searched"] >= chunks["passed_floors"] >= chunks["returned"] == len(result.hits)
    assert result.diagnostics["rerank_used"] is False and "rerank" not in timings


def test_a_step_switched_off_does_not_run(store):
    settings = QueryConfig(steps={"packing": False, "gaps": False})
    retriever = Retriever(MilvusConfig(), settings, HashingEncoder(), client=store)
    result = retriever.retrieve("how do I promote the ledger-db replica", SRE)
    assert result.hits and result.blocks == [] and "pack" not in result.diagnostics
    assert "packing" not in result.diagnostics["timings_ms"] and result.diagnostics["steps_off"] == ["gaps", "packing"]


def test_a_row_the_acl_recheck_refuses_never_leaves(store, retriever):
    """A parent row whose ACL no longer admits the caller (changed between search and fetch) is not returned."""
    question = "how do I promote the ledger-db replica when the primary is lost"
    before = retriever.retrieve(question, SRE, k=3)
    top = before.hits[0].chunk_id
    store.rows_by_id[top] = replace(store.rows_by_id[top], access_control_list=["payments"])
    after = retriever.retrieve(question, SRE, k=3)
    assert top not in {h.chunk_id for h in after.hits}


def test_a_question_refused_as_vague_says_the_gates_reason(retriever):
    vague = retriever.retrieve("help", SRE)
    assert vague.diagnostics["gate"] and "gate" in vague.diagnostics["timings_ms"]
