"""The query pipeline against a collection built by the real ingest flow (plus history rows written directly):
isolation under hostile input, doc_tag scope, as_of, the no-results and guidance paths, packing and the CLI."""

from __future__ import annotations

import json
import logging

import pytest

from cairn.cli.app import main as cairn
from cairn.flows.ingest import ingest_flow
from cairn.query import FilterError, Principal, Retriever
from cairn.schemas import ContentType, SourceDocument, SourceType
from cairn.schemas.config import load_config
from cairn.schemas.records import parse_day
from cairn.sources import document_id
from tests.conftest import write_config, write_page
from tests.integration import corpus

FILLER = corpus.FILLER
PAST_START, PAST_END = parse_day("2025-01-01"), parse_day("2025-06-01")


def long_section(title: str, fact: str) -> str:
    return corpus.section(title, fact, repeat=9)  # ~500 tokens: each heading stays its own parent section


@pytest.fixture(scope="module")
def collection(tmp_path_factory, prefect_server):
    tmp = tmp_path_factory.mktemp("query")
    root = tmp / "wiki"
    corpus.build(root)
    write_page(
        root,
        "acme/payments-restart.md",
        "# Payments restart\n\n"
        + long_section("Drain traffic", "Drain the payments-api pods behind the orchid load balancer first.")
        + long_section("Restart pods", "Restart payments-api with kubectl rollout restart deployment payments-api.")
        + long_section("Verify settlement", "Verify that settlement batches resume within five minutes."),
        title="Payments restart",
        acl=["sre"],
    )
    for year, fee in (("2023", "two percent"), ("2024", "three percent")):
        write_page(
            root,
            f"acme/msa-{year}.md",
            f"# Master services agreement {year}\n\n"
            + corpus.section("Late payment", f"Late payment of an invoice incurs a fee of {fee} per month."),
            title=f"Master services agreement {year}",
            acl=["sre"],
            doc_tag=f"msa-{year}",
        )
    config_path = write_config(
        tmp / "cairn.toml",
        tmp / "index",
        [
            {
                "name": "acme-wiki",
                "type": "wiki",
                "path": str(root / "acme"),
                "tenant": "acme",
                "acl": ["sre"],
                "acl_ceiling": corpus.ACME_GROUPS,
            },
            {
                "name": "globex-wiki",
                "type": "wiki",
                "path": str(root / "globex"),
                "tenant": "globex",
                "acl": ["globex-ops"],
            },
        ],
    )
    report = ingest_flow(config_path=str(config_path))
    assert report["documents"]["failed"] == 0
    write_history(config_path)
    retriever = Retriever.from_config(config_path)
    yield retriever, config_path
    retriever.close()


def write_history(config_path) -> None:
    """A past version of kafka-lag.md kept as history: is_current false, valid in [PAST_START, PAST_END)."""
    config = load_config(config_path)
    body = "# Kafka consumer lag\n\n" + corpus.section(
        "Mitigate", "Scale settlement-writer to eight replicas and raise max.poll.records to 200."
    )
    doc = SourceDocument(
        document_id=document_id(SourceType.WIKI, "acme-wiki", "kafka-lag.md"),
        source_name="acme-wiki",
        source_type=SourceType.WIKI,
        source_uri="file:///wiki/kafka-lag.md",
        locator="kafka-lag.md",
        title="Kafka consumer lag",
        content=body,
        tenant_id="acme",
        access_control_list=["sre", "platform"],
        content_type=ContentType.DOCUMENT,
        version_hash="0ld0ld0ld",
        created_at=PAST_START,
        updated_at=PAST_START,
        temporal_start=PAST_START,
        temporal_end=PAST_END,
        is_current=False,
    )
    corpus.write_documents(config, [doc])


HOSTILE = ['acme" or tenant_id != "', 'sre" or acl_key like "%', "%", "\\", "' or 1=1 --", 'x") or (true']


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_strings_never_widen_access(collection, hostile):
    retriever, _ = collection
    question = "revoke the leaked vault token zebra-orchid-42"
    sre = Principal("acme", ["sre"])
    for kwargs in ({"doc_tag": hostile}, {"filters": {"service_name": hostile}}, {"filters": {"tags": [hostile]}}):
        assert retriever.retrieve(question, sre, **kwargs).hits == []
    for principal in (Principal(hostile, ["sre", "security"]), Principal("acme", [hostile])):
        assert retriever.retrieve(question, principal).hits == []
    as_acme = retriever.retrieve(
        "restart scanner-gateway depot-east cluster", Principal("acme", ["sre", "globex-ops", hostile])
    )
    assert all(h.title != "Warehouse scanner API" for h in as_acme.hits)


@pytest.mark.core
def test_acl_decides_who_sees_a_page_and_unknown_filters_are_refused(collection):
    retriever, _ = collection
    question = "revoke the leaked vault token zebra-orchid-42"
    assert all(
        h.title != "Rotate leaked credentials" for h in retriever.retrieve(question, Principal("acme", ["sre"])).hits
    )
    as_security = retriever.retrieve(question, Principal("acme", ["security"]))
    assert as_security.hits and {h.title for h in as_security.hits} == {"Rotate leaked credentials"}
    with pytest.raises(FilterError, match="unknown filter field 'tenant_id'"):
        retriever.retrieve(question, Principal("acme", ["sre"]), filters={"tenant_id": "globex"})


def test_doc_tag_scopes_the_answer_to_one_document_family(collection):
    retriever, _ = collection
    question = "fee for late payment of an invoice"
    for year, fee in (("2023", "two percent"), ("2024", "three percent")):
        result = retriever.retrieve(question, Principal("acme", ["sre"]), doc_tag=f"msa-{year}")
        assert result.hits and {h.doc_tag for h in result.hits} == {f"msa-{year}"}
        assert fee in result.hits[0].text


def test_a_two_word_question_is_searched_when_scoped_to_a_document_family(collection):
    # the scope names the subject, so "late fee" asked of one agreement is as precise as three words
    retriever, _ = collection
    sre = Principal("acme", ["sre"])
    scoped = retriever.retrieve("late fee", sre, doc_tag="msa-2024")
    assert scoped.status == "ok" and "three percent" in scoped.hits[0].text
    # a keyword few passages hold is searched too, scoped or not (#53: people type keywords into search boxes)
    for kwargs in ({}, {"doc_tag": "msa-2024"}):
        keyword = retriever.retrieve("fee", sre, **kwargs)
        assert keyword.status == "ok" and "specific word 'fee'" in keyword.diagnostics["gate"]


def test_as_of_answers_with_the_version_valid_then(collection):
    retriever, _ = collection
    question, sre = "how many settlement-writer replicas mitigate kafka lag", Principal("acme", ["sre"])
    now = " ".join(h.text for h in retriever.retrieve(question, sre).hits)
    assert "twelve replicas" in now and "eight replicas" not in now
    then = retriever.retrieve(question, sre, as_of=parse_day("2025-03-01")).hits
    assert then and all(h.version_hash == "0ld0ld0ld" for h in then) and "eight replicas" in then[0].text
    assert retriever.retrieve(question, sre, as_of=parse_day("2024-06-01")).hits == []  # before anything existed


def test_vague_question_gets_guidance_and_unrelated_one_no_results(collection):
    retriever, _ = collection
    vague = retriever.retrieve("help me", Principal("acme", ["sre"]))
    assert vague.status == "guidance" and vague.message and vague.hits == [] and vague.blocks == []
    unrelated = retriever.retrieve("sourdough bread proofing temperature", Principal("acme", ["sre"]))
    assert unrelated.status == "no_results" and unrelated.hits == [] and unrelated.confidence == "SPECULATIVE"


@pytest.mark.core
def test_a_hit_is_packed_with_the_adjacent_sections_of_its_heading_in_document_order_and_cited(collection):
    retriever, _ = collection
    result = retriever.retrieve(
        "restart payments-api with kubectl rollout restart deployment", Principal("acme", ["sre"]), k=3
    )
    top = result.hits[0]
    assert top.title == "Payments restart" and "Restart pods" in top.breadcrumbs
    assert top.citation.startswith("Payments restart › Restart pods (v") and top.citation.count("Payments restart") == 1
    block = next(b for b in result.blocks if b.rank == 1)
    assert top.section_id in block.section_ids and len(block.section_ids) >= 2 and block.tokens <= 1400
    facts = ("Drain the payments-api", "Restart payments-api with", "Verify that settlement batches")
    positions = [block.text.find(f) for f in facts if f in block.text]
    assert len(positions) >= 2 and positions == sorted(positions)  # document order, whatever the ranks
    assert result.confidence in ("HIGH", "MEDIUM") and "timings_ms" in result.diagnostics


def test_cli_query_json_keeps_its_keys_and_batch_mode_writes_one_line_per_query(collection, capsys, tmp_path):
    _, config_path = collection
    assert (
        cairn(
            [
                "query",
                "--config",
                str(config_path),
                "promote the ledger replica with pg_ctl",
                "--tenant",
                "acme",
                "--group",
                "sre",
                "--json",
                "--k",
                "2",
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert {
        "chunk_id",
        "document_id",
        "section_id",
        "breadcrumbs",
        "title",
        "source_uri",
        "score",
        "text",
        "citation",
    } <= set(data["results"][0]) and data["confidence"]
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        json.dumps({"id": "a", "text": "promote the ledger replica with pg_ctl", "tenant": "acme", "groups": ["sre"]})
        + "\n"
        + json.dumps({"id": "b", "text": "help", "tenant": "acme", "groups": ["sre"]})
        + "\n"
    )
    assert cairn(["query", "--config", str(config_path), "--queries", str(queries)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["id"] for line in lines] == ["a", "b"] and lines[0]["results"] and lines[1]["results"] == []
    assert set(lines[0]) >= {"id", "results", "confidence", "gaps"}


def test_cli_eval_scores_labelled_queries_by_source_path_with_ablations(collection, capsys, tmp_path):
    _, config_path = collection
    queries, qrels = tmp_path / "q.jsonl", tmp_path / "qrels.tsv"
    queries.write_text(
        "\n".join(
            json.dumps(q)
            for q in [
                {"_id": "1", "text": "promote the ledger replica with pg_ctl"},
                {"_id": "2", "text": "settlement-writer consumer group lag on payments.settled"},
            ]
        )
        + "\n"
    )
    qrels.write_text("query-id\tcorpus-id\tscore\n1\tledger-failover\t1\n2\tkafka-lag.md\t1\n")
    assert (
        cairn(
            [
                "eval",
                "--config",
                str(config_path),
                "--queries",
                str(queries),
                "--qrels",
                str(qrels),
                "--tenant",
                "acme",
                "--group",
                "sre",
                "--ablate",
                "floors,keyword_leg",
                "--json",
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["queries"] == 2 and report["metrics"]["recall@1"] == 1.0 and report["metrics"]["ndcg@10"] == 1.0
    assert set(report["ablations"]) == {"floors", "keyword_leg"}


def test_the_cache_answers_a_repeated_question_for_the_same_principal_only(collection, caplog):
    retriever, _ = collection
    settings = retriever.settings.model_copy(update={"cache_ttl_seconds": 60.0})
    cached = Retriever(retriever.milvus, settings, retriever.encoder, client=retriever.reader)
    question = "promote the ledger replica with pg_ctl"
    caplog.set_level(logging.INFO, logger="cairn.query")
    first = cached.retrieve(question, Principal("acme", ["sre"]))
    again = cached.retrieve("  Promote the ledger replica  with pg_ctl", Principal("acme", ["sre"]))
    other = cached.retrieve(question, Principal("acme", ["security"]))
    assert again.diagnostics.get("cache") == "hit" and [h.chunk_id for h in again.hits] == [
        h.chunk_id for h in first.hits
    ]
    assert other.diagnostics.get("cache") is None and all(h.title != "Ledger DB failover" for h in other.hits)
    # issue #51: an answer served from the cache wrote no query log record
    records = [json.loads(r.getMessage()) for r in caplog.records if r.name == "cairn.query" and '"event"' in r.msg]
    assert [r.get("cache") for r in records] == [None, "hit", None] and {r["tenant"] for r in records} == {"acme"}


def test_cli_eval_without_a_tenant_refuses_a_collection_of_several(collection, capsys, tmp_path):
    _, config_path = collection
    queries, qrels = tmp_path / "q.jsonl", tmp_path / "qrels.tsv"
    queries.write_text(json.dumps({"_id": "1", "text": "promote the ledger replica with pg_ctl"}) + "\n")
    qrels.write_text("1\tledger-failover\t1\n")
    assert cairn(["eval", "--config", str(config_path), "--queries", str(queries), "--qrels", str(qrels)]) == 2
    assert "several tenants (acme, globex): pass --tenant" in capsys.readouterr().err


BEIR_CORPUS = [
    ("d1", "Ledger failover", "Promote the ledger replica with pg_ctl promote when the primary is lost."),
    ("d2", "Kafka consumer lag", "Scale the settlement-writer consumers when lag on payments.settled grows."),
    ("d3", "Certificate renewal", "Renew the edge proxy TLS certificate with cert-manager before it expires."),
    ("d4", "Disk pressure", "Free space on the node by pruning container images and rotating logs."),
]


def test_cairn_eval_beir_ingests_the_corpus_through_the_pipeline_then_scores_it(prefect_server, capsys, tmp_path):
    corpus_path, queries, qrels = tmp_path / "corpus.jsonl", tmp_path / "queries.jsonl", tmp_path / "qrels.tsv"
    corpus_path.write_text("".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in BEIR_CORPUS))
    queries.write_text(
        "".join(
            json.dumps({"_id": f"q{n}", "text": q}) + "\n"
            for n, q in enumerate(
                [
                    "how do I promote the ledger replica",
                    "consumer lag on the settlement writer",
                    "TLS certificate on the edge proxy expired",
                ]
            )
        )
    )
    qrels.write_text("query-id\tcorpus-id\tscore\nq0\td1\t1\nq1\td2\t1\nq2\td3\t1\n")
    args = [
        "eval",
        "beir",
        "--corpus",
        str(corpus_path),
        "--queries",
        str(queries),
        "--qrels",
        str(qrels),
        "--work",
        str(tmp_path / "work"),
        "--json",
    ]
    assert cairn(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["ingest"]["indexed"] == 4 and first["ingest"]["failed"] == 0
    assert first["queries"] == 3 and first["metrics"]["recall@1"] == 1.0 and first["metrics"]["ndcg@10"] == 1.0
    assert first["principal"] == {"tenant": "beir", "groups": ["eval"]}
    assert cairn(args) == 0  # the scratch index is kept: nothing is ingested twice
    again = json.loads(capsys.readouterr().out)
    assert (
        again["ingest"]["indexed"] == 0 and again["ingest"]["unchanged"] == 4 and again["metrics"] == first["metrics"]
    )
    # --config X: the scratch index asked with X's [query] settings (#53: they were ignored); here, no search leg
    settings = tmp_path / "x.toml"
    settings.write_text("[query]\nsteps = { dense_leg = false, keyword_leg = false }\n")
    assert cairn([*args, "--config", str(settings)]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["ndcg@10"] == 0.0


def test_a_beir_id_that_could_escape_the_scratch_folder_is_refused(tmp_path):
    from cairn.flows.beir import write_pages

    corpus_path = tmp_path / "corpus.jsonl"
    corpus_path.write_text(json.dumps({"_id": "../../etc/x", "text": "t"}) + "\n")
    with pytest.raises(ValueError, match="cannot name a page"):
        write_pages(corpus_path, tmp_path / "pages")
    assert not (tmp_path / "pages" / "x.md").exists()
