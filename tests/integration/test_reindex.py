"""Reindex without downtime (index/generations.py, query/serving.py): a switch of the encoder (here 0.4's
all-MiniLM-L6-v2 to 0.5's bge-small-en-v1.5, the upgrade a user makes) builds the new collection beside the
serving one, switches the alias once every source is built, and drops the old; queries
are answered throughout, each embedded with the encoder of the collection it reads. Real Prefect runs, the real
models, Milvus Lite; the smallest corpus that shows it (one short page per source)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from prefect.settings import PREFECT_API_URL

from cairn.cli.app import main
from cairn.embedding import load_encoder
from cairn.errors import SourcesFailed
from cairn.flows.ingest import ingest_flow
from cairn.index.derived import in_step_ledger
from cairn.index.generations import Generations, open_serving
from cairn.index.ledger import collection_ledger
from cairn.index.milvus import Connection
from cairn.index.store import MilvusStore
from cairn.query import Principal, Retriever
from cairn.schemas.config import MilvusConfig, QueryConfig, load_config
from tests.conftest import REPO, write_config, write_page
from tests.integration.corpus import section

TORCH = "all-MiniLM-L6-v2/seq256/d384"
ONNX = TORCH + "/onnx-int8"
BGE = "bge-small-en-v1.5/seq256/d384/onnx-int8"
SRE = Principal("acme", ["sre"])


def ledgers(config) -> list[str]:
    """The collections that have a derived ledger file (index/derived.py)."""
    return sorted(path.name.split("-")[0] for path in load_config(config).ledger_folder.glob("*.sqlite"))


def wiki(root, name: str, fact: str) -> dict:
    write_page(
        root / name,
        f"{name}.md",
        f"# {name} runbook\n\n" + section("Steps", fact, repeat=1),
        title=f"{name} runbook",
        tenant="acme",
        acl=["sre"],
    )
    return {"name": name, "type": "wiki", "path": str(root / name), "tenant": "acme", "acl": ["sre"]}


def use_model(config, model: str | None) -> None:
    """The one change a user makes: `[embedding] model = ...` (None: the line removed, the default model)."""
    lines = [line for line in config.read_text().splitlines(keepends=True) if not line.startswith("model = ")]
    text = "".join(lines)
    config.write_text(text.replace("[embedding]\n", f'[embedding]\nmodel = "{model}"\n', 1) if model else text)


def minilm_config(path, index, sources):
    """An index as 0.4 made it: all-MiniLM-L6-v2, its default then."""
    config = write_config(path, index, sources)
    use_model(config, "all-MiniLM-L6-v2")
    return config


def index_state(config) -> tuple[dict, list[str]]:
    milvus = load_config(config).milvus
    with Connection.open(milvus, create=False) as connection:
        return Generations(connection.client, milvus).status(), sorted(connection.client.list_collections())


def answer(retriever: Retriever, question: str) -> list[str]:
    """The titles of the relevant results (a weak one is still listed, flagged `low_relevance`)."""
    return [hit.title for hit in retriever.retrieve(question, SRE, k=2).hits if not hit.low_relevance]


def test_a_model_switch_migrates_a_legacy_collection_while_an_open_retriever_keeps_answering(tmp_path, prefect_server):
    config = minilm_config(
        tmp_path / "cairn.toml",
        tmp_path / "index",
        [
            wiki(
                tmp_path, "ledger", "Run pg_ctl promote on ledger-db-replica-02 to promote the ledger database replica."
            )
        ],
    )
    store = MilvusStore(load_config(config).milvus, 384)
    store.ensure_collection()  # as Cairn made it before generations: a plain collection under the configured name
    store.close()
    ingest_flow(config_path=str(config))
    assert index_state(config) == (
        {"serving": "cairn", "aliased": False, "encoder": TORCH, "building": None},
        ["cairn"],
    )

    retriever = Retriever.from_config(config)  # a service's long-lived Retriever
    question = "how do I promote the ledger database replica"
    assert answer(retriever, question) == ["ledger runbook"]
    use_model(config, None)  # 0.5's default from here on
    report = ingest_flow(config_path=str(config))
    assert report["index"]["switch"] == "done" and report["index"]["dropped"] == "cairn"
    assert report["embeddings_computed"] > 0  # rebuilt with the new encoder
    assert index_state(config) == (
        {"serving": "cairn__g2", "aliased": True, "encoder": BGE, "building": None},
        ["cairn__g2"],
    )
    assert answer(retriever, question) == ["ledger runbook"]  # the same Retriever, now on the new generation...
    assert retriever.encoder.identity == BGE  # ...embedding with its encoder
    assert ingest_flow(config_path=str(config))["documents"]["unchanged"] == 1  # and the next run has nothing to do


def test_a_rebuild_that_fails_or_is_killed_half_way_leaves_the_old_serving_and_the_next_run_resumes_it(
    tmp_path, prefect_server, capsys
):
    sources = [
        wiki(tmp_path, "ledger", "Run pg_ctl promote on ledger-db-replica-02 to promote the ledger replica."),
        wiki(tmp_path, "kafka", "Scale settlement-writer to twelve replicas when consumer lag grows on payments."),
    ]
    config = minilm_config(tmp_path / "cairn.toml", tmp_path / "index", sources)
    first = ingest_flow(config_path=str(config))
    assert first["index"] == {
        "collection": "cairn__g1",
        "serving": "cairn__g1",
    }  # a new index: a generation and the alias

    use_model(config, "bge-small-en-v1.5")
    (tmp_path / "kafka").rename(tmp_path / "kafka-away")  # one source fails as a whole half-way through the rebuild
    with pytest.raises(SourcesFailed) as failed:
        ingest_flow(config_path=str(config))
    index = failed.value.report["index"]
    assert index["switch"] == "pending" and index["waiting_for"] == ["kafka"] and index["serving"] == "cairn__g1"
    assert main(["status", "--json", "--config", str(config)]) == 0  # what an operator sees meanwhile
    status = json.loads(capsys.readouterr().out)
    assert status["index"] == {
        "serving": "cairn__g1",
        "aliased": True,
        "encoder": TORCH,
        "building": {"collection": "cairn__g2", "encoder": BGE, "built_sources": ["ledger"]},
    }
    assert {row["source"] for row in status["rows"]} == {"ledger", "kafka"}  # counted on the serving generation

    retriever = Retriever.from_config(config)  # the config says bge; the serving collection holds MiniLM vectors
    assert retriever.encoder.identity == TORCH
    assert answer(retriever, "how do I scale settlement-writer for consumer lag") == ["kafka runbook"]
    retriever.close()  # this process lets go of the Lite folder

    (tmp_path / "kafka-away").rename(tmp_path / "kafka")
    killed = subprocess.run(
        [sys.executable, "-m", "cairn.cli", "ingest", "--config", str(config), "--json"],
        cwd=REPO,
        env={**os.environ, "PREFECT_API_URL": str(PREFECT_API_URL.value()), "CAIRN_FAILPOINT": "written"},
        capture_output=True,
        text=True,
        timeout=300,
    )  # SIGKILLed once kafka's rows are written
    assert killed.returncode == -9, killed.stderr[-2000:]
    assert index_state(config)[0]["serving"] == "cairn__g1"  # the switch had not happened: the old still serves
    assert ledgers(config) == ["cairn__g1", "cairn__g2"]  # each generation has its derived ledger
    resumed = ingest_flow(config_path=str(config))
    assert resumed["documents"]["unchanged"] == 2 and resumed["embeddings_computed"] == 0  # built before, not again
    assert resumed["index"]["switch"] == "done" and resumed["index"]["dropped"] == "cairn__g1"
    assert index_state(config) == (
        {"serving": "cairn__g2", "aliased": True, "encoder": BGE, "building": None},
        ["cairn__g2"],
    )
    assert ledgers(config) == ["cairn__g2"]  # the dropped generation's went with it; the killed run's was rebuilt:
    with (
        open_serving(load_config(config).milvus) as reader,
        in_step_ledger(load_config(config).ledger_folder, reader) as derived,
    ):
        assert derived is not None and derived.ledger("kafka") == collection_ledger(reader, "kafka")
    retriever = Retriever.from_config(config)
    # the new generation's encoder, the process-wide one of its model (its export under the index folder)
    assert retriever.encoder is load_encoder("bge-small-en-v1.5", onnx_cache=load_config(config).embedding.onnx_cache)
    assert answer(retriever, "how do I scale settlement-writer for consumer lag") == ["kafka runbook"]
    retriever.close()


def test_a_retriever_moves_to_the_new_generation_and_its_encoder_together_when_the_alias_switches(tmp_path, onnx_cache):
    milvus = MilvusConfig(uri=str(tmp_path / "index" / "cairn.db"))
    connection = Connection.open(milvus, create=True)
    client = connection.client
    generations = Generations(client, milvus)
    for collection, identity in (("cairn__g1", TORCH), ("cairn__g2", ONNX)):
        MilvusStore(generations.physical(collection), 384, connection).ensure_collection(embedder=identity)
    client.create_alias("cairn__g1", "cairn")
    onnx = load_encoder("all-MiniLM-L6-v2", "onnx-int8", onnx_cache)  # what the config names, mid-rebuild
    retriever = Retriever(milvus, QueryConfig(serving_check_seconds=0), onnx, client=connection)  # 0: check every query
    assert (retriever.reader.collection, retriever.encoder.identity) == ("cairn__g1", TORCH)
    client.alter_alias("cairn__g2", "cairn")  # what a writer's switch does
    assert retriever.retrieve("how do I promote the ledger replica", SRE).status == "no_results"
    assert (retriever.reader.collection, retriever.encoder) == ("cairn__g2", onnx)
    retriever.close()
