"""The Milvus server path (`uri = "http://host:19530"`), against a Milvus gRPC server in its own process on
127.0.0.1 (tests/milvus_server.py): the same code as Lite, reached over the network."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from cairn.flows.ingest import ingest_flow
from cairn.index.milvus import Connection
from cairn.schemas.config import MilvusConfig
from tests.conftest import REPO, write_config
from tests.integration import corpus
from tests.integration.test_ingest_flow import retrieve, rows
from tests.milvus_server import MilvusServer

TOKEN = "root:Milvus"  # sent as the server's token; the test server does not check it


@pytest.fixture
def milvus(tmp_path):
    with MilvusServer(tmp_path / "milvus") as server:
        yield server


@pytest.fixture
def wiki(tmp_path, prefect_server):
    root = tmp_path / "wiki"
    corpus.build(root)
    return write_config(
        tmp_path / "cairn.toml",
        tmp_path / "index",
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


@pytest.mark.core
def test_a_server_uri_gets_exactly_the_rows_of_the_lite_file(wiki, milvus, tmp_path, monkeypatch):
    lite = ingest_flow(config_path=str(wiki))
    lite_rows = rows(wiki)
    (tmp_path / "index" / "cairn.db").rename(tmp_path / "lite.db")  # what follows must not touch a Lite file
    (tmp_path / "index" / "cairn.lock").unlink()  # nor take the Lite writer lock

    monkeypatch.setenv("CAIRN_MILVUS_URI", milvus.uri)
    monkeypatch.setenv("CAIRN_MILVUS_TOKEN", TOKEN)
    report = ingest_flow(config_path=str(wiki))
    assert report["documents"] == lite["documents"] and report["rows_written"] == lite["rows_written"]
    assert report["embeddings_computed"] == 0  # the embedding cache is the config's, whatever the store
    served = rows(wiki)
    assert served.keys() == lite_rows.keys()
    assert all(served[key] == lite_rows[key] for key in served)
    assert not (tmp_path / "index" / "cairn.db").exists() and not (tmp_path / "index" / "cairn.lock").exists()

    top = retrieve(wiki, "how do I promote the ledger replica", "acme", ["sre"], k=3).hits[0]
    assert top.title == "Ledger DB failover" and "pg_ctl promote" in top.text
    # the tenant and ACL filter is expressed the same way on the server
    secret = "revoke the leaked vault token zebra-orchid-42"
    assert all(hit.title != "Rotate leaked credentials" for hit in retrieve(wiki, secret, "acme", ["sre"]).hits)
    assert retrieve(wiki, secret, "acme", ["security"]).hits[0].title == "Rotate leaked credentials"
    assert (
        retrieve(wiki, "restart scanner-gateway depot-east", "globex", ["globex-ops"]).hits[0].title
        == "Warehouse scanner API"
    )
    as_acme = retrieve(wiki, "restart scanner-gateway depot-east", "acme", ["sre", "globex-ops"], k=8)
    assert all(hit.title != "Warehouse scanner API" for hit in as_acme.hits)

    again = ingest_flow(config_path=str(wiki))  # the ledger is read back from the server
    assert again["documents"]["unchanged"] == 4 and again["rows_written"] == 0


def bench(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
    )


def test_query_speed_bench_runs_on_a_server_and_drops_what_it_made(milvus, tmp_path):
    connection = Connection.open(MilvusConfig(uri=milvus.uri), create=False)
    client = connection.client
    client.create_collection("users_own", dimension=4)  # not the benchmark's: must survive it
    result = bench(
        "bench.query_speed",
        "--rows",
        "300",
        "--queries",
        "3",
        "--store",
        "server",
        "--uri",
        milvus.uri,
        env={"CAIRN_BENCH_RESULTS": str(tmp_path / "results")},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    measured = json.loads((tmp_path / "results" / "query_speed.json").read_text())
    assert measured["store"] == {"kind": "server", "uri": milvus.uri}
    (size,) = measured["sizes"]
    assert size["rows"] == 300 and size["queries"] == 3
    assert (
        size["retrieve_p95_ms"] >= size["retrieve_p50_ms"] > 0
        and size["raw_hybrid_p95_ms"] >= size["raw_hybrid_p50_ms"] > 0
    )
    assert client.list_collections() == ["users_own"]
    connection.close()


def test_bench_store_server_names_an_unreachable_uri():
    result = bench("bench.query_speed", "--rows", "300", "--store", "server", "--uri", "http://127.0.0.1:9")
    assert result.returncode == 2 and "cannot reach Milvus at http://127.0.0.1:9" in result.stderr
