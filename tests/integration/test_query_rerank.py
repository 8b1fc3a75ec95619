"""Rule 11 through Retriever.retrieve on a real index (the two-tenant wiki, bge-small-en-v1.5) with the real
cross-encoder: it reorders a question whose top score is in the band, and only such a question; what it did is
in the diagnostics and the query log record."""

from __future__ import annotations

import json
import logging

import pytest

from cairn.embedding import encoder_for
from cairn.query import Principal, Retriever
from cairn.query.rerank import FLAG
from cairn.query.retriever import connect
from cairn.schemas.config import QueryConfig, load_config
from tests.integration import corpus

QUESTION = "what to do when the consumer group lags behind"
SRE = Principal("acme", corpus.ACME_GROUPS)


@pytest.fixture(scope="module")
def ask(tmp_path_factory):
    config = load_config(corpus.index_directly(tmp_path_factory.mktemp("rerank")))
    reader = connect(config.milvus)
    encoder = encoder_for(config.embedding)

    def retrieve(**settings):
        # every candidate ranked once one passes the floors: three sections to put in order, not one
        query = config.query.model_copy(update={"floor_scope": "answer", **settings})
        retriever = Retriever(config.milvus, type(query)(**query.model_dump()), encoder, client=reader)
        return retriever.retrieve(QUESTION, SRE, k=3)

    yield retrieve
    reader.close()


@pytest.mark.slow
def test_the_reranker_reorders_a_borderline_question_and_leaves_any_other_as_fused(ask, caplog):
    plain = ask()
    top = plain.diagnostics["combined_top"]
    assert (plain.diagnostics["rerank_used"], plain.diagnostics["rerank_ms"]) == (False, 0.0)

    with caplog.at_level(logging.INFO, logger="cairn.query"):
        # the model's order alone (the default blend keeps this question's fused order)
        inside = ask(steps={"rerank": True}, rerank_band=(top - 0.01, top + 0.01), rerank_weight=1.0)
    outside = ask(steps={"rerank": True}, rerank_band=(top + 0.01, 1.0))

    assert inside.diagnostics["rerank_used"] and inside.diagnostics["rerank_ms"] > 0
    assert inside.diagnostics["timings_ms"]["rerank"] >= inside.diagnostics["rerank_ms"]
    assert all(FLAG in h.flags for h in inside.hits)
    fused_order, reranked_order = [h.chunk_id for h in plain.hits], [h.chunk_id for h in inside.hits]
    assert reranked_order != fused_order and sorted(reranked_order) == sorted(fused_order)
    record = json.loads(next(r.getMessage() for r in caplog.records if '"event": "query"' in r.getMessage()))
    assert record["rerank_used"] is True and record["rerank_ms"] == inside.diagnostics["rerank_ms"]

    assert (outside.diagnostics["rerank_used"], outside.diagnostics["rerank_ms"]) == (False, 0.0)
    assert [h.to_dict() for h in outside.hits] == [h.to_dict() for h in plain.hits]


# Pages where the fusion and the cross-encoder disagree: asked whether the gateway is reachable from the scanners
# over TLS, the fusion puts the gateway's overview (its words, its topic) first, a hair above the firewall rule that
# answers it; the cross-encoder reads the firewall rule first.
DISAGREE = "is the gateway reachable from the scanners over TLS"
PAGES = {
    "scanner-overview.md": (
        "Scanner gateway",
        "## Overview\n\nThe scanner gateway is the depot service that receives barcode scans from the warehouse "
        "scanners and forwards them to the inventory system. It runs in the depot-east cluster and is owned by the "
        "logistics platform team.\n",
    ),
    "firewall.md": (
        "Depot firewall rules",
        "## Open ports\n\nOpen TCP 8443 on the depot-east firewall: the gateway accepts TLS connections from the "
        "scanners on 8443 only.\n",
    ),
    "cert-expiry.md": (
        "Certificate expiry",
        "## Renew\n\nCertificates of internal services are renewed by cert-manager thirty days before they expire; a "
        "certificate that did not renew is renewed by deleting its secret.\n",
    ),
    "cert-overview.md": (
        "TLS certificates",
        "## About\n\nEvery internal service presents a TLS certificate issued by the internal certificate authority; "
        "certificates expire after ninety days and the certificate dashboard lists each service's certificate and "
        "its expiry.\n",
    ),
    "kafka.md": ("Kafka consumer lag", "## Mitigate\n\nScale settlement-writer to twelve replicas.\n"),
    "ledger.md": ("Ledger DB failover", "## Promote\n\nRun pg_ctl promote on ledger-db-replica-02.\n"),
}
OTHERS = ["which service receives the barcode scans", "how long is an internal TLS certificate valid"]


@pytest.fixture(scope="module")
def depot(tmp_path_factory):
    from cairn.schemas import ContentType, SourceDocument, SourceType
    from tests.conftest import write_config
    from tests.integration.corpus import write_documents

    tmp = tmp_path_factory.mktemp("depot")
    config = load_config(write_config(tmp / "cairn.toml", tmp / "index", []))
    write_documents(
        config,
        [
            SourceDocument(
                document_id=f"d-{locator.split('.')[0]}",
                source_name="wiki",
                source_type=SourceType.WIKI,
                source_uri=f"file:///wiki/{locator}",
                locator=locator,
                title=title,
                content=f"# {title}\n\n{body}",
                tenant_id="acme",
                access_control_list=["sre"],
                content_type=ContentType.RUNBOOK,
                version_hash=f"v-{len(body)}",
                created_at=1_750_000_000,
                updated_at=1_750_000_000,
                temporal_start=1_750_000_000,
            )
            for locator, (title, body) in PAGES.items()
        ],
    )
    reader = connect(config.milvus)
    encoder = encoder_for(config.embedding)

    def retrieve(question: str, **settings):
        query = config.query.model_copy(update={"floor_scope": "answer", **settings})
        retriever = Retriever(config.milvus, type(query)(**query.model_dump()), encoder, client=reader)
        return retriever.retrieve(question, Principal("acme", ["sre"]), k=4)

    yield retrieve
    reader.close()


# the reranker on every question, the cheapest reading that keeps its gain (docs/retrieval.md, "The reranker")
EVERY = {"steps": {"rerank": True}, "rerank_band": (0.0, 2.0), "rerank_top": 5, "rerank_tokens": 128}


@pytest.mark.slow
def test_on_every_question_the_reranker_runs_and_reorders_where_the_cross_encoder_disagrees(depot):
    off = depot(DISAGREE)
    on = depot(DISAGREE, **EVERY)  # its top 5, 128 word pieces each (the recipe of docs/retrieval.md)
    assert not off.diagnostics["rerank_used"]
    assert on.diagnostics["rerank_used"] and on.diagnostics["rerank_ms"] > 0
    assert [h.document_id for h in off.hits][:2] == ["d-scanner-overview", "d-firewall"]
    assert [h.document_id for h in on.hits][:2] == ["d-firewall", "d-scanner-overview"]  # the answer first
    assert sorted(h.document_id for h in on.hits) == sorted(h.document_id for h in off.hits)
    # each keeps its own combined score: the firewall rule is served first at the score it had
    assert {h.document_id: h.score for h in on.hits} == {h.document_id: h.score for h in off.hits}

    for question in OTHERS:  # a confident top is reranked too, and where the model agrees nothing moves
        plain, result = depot(question), depot(question, **EVERY)
        assert result.diagnostics["combined_top"] >= QueryConfig().rerank_band[1]  # above the spec's band
        assert result.diagnostics["rerank_used"] and all(FLAG in h.flags for h in result.hits)
        assert [h.document_id for h in result.hits][0] == [h.document_id for h in plain.hits][0]
