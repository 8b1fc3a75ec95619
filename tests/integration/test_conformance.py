"""bench.conformance as CI runs it: `python -m bench.conformance --uri URI` against a Milvus Lite folder (the `core`
test: the engine Cairn embeds agrees with itself through Cairn's index server, so a server that differs is told
apart by this one command) and against milvus-lite's gRPC server (the server path, as a Milvus server is reached)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.milvus_server import MilvusServer


def conformance(uri: str) -> tuple[int, dict]:
    done = subprocess.run(
        [sys.executable, "-m", "bench.conformance", "--uri", uri, "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return done.returncode, json.loads(done.stdout)


def observed(report: dict) -> dict:
    return {b["behaviour"]: b["uri"] for b in report["behaviours"]}


@pytest.mark.core
def test_a_lite_folder_behaves_as_the_embedded_engine_in_every_behaviour_cairn_relies_on(tmp_path):
    code, report = conformance(str(tmp_path / "target.db"))
    assert code == 0 and [b["behaviour"] for b in report["behaviours"] if not b["same"]] == []
    seen = observed(report)
    assert seen["BM25 score sign and scale"]["sign"] == "negative"  # Lite's; a Milvus server's are positive
    assert seen["BM25 IDF"]["rare_over_common"] is True
    filters = seen["filters with escaping"]  # each hostile title matches its own row, and only it
    assert all(len(ids) == 1 for label, ids in filters.items() if label.startswith(("'", '"')))
    assert filters["acl like, hostile group"] == ["c7"] and "c7" not in filters["acl like, sre"]
    assert seen["partition key"]["partition_key"] == ["tenant_id"]
    assert seen["group_by"]["one_per_document"] is True
    assert seen["upsert and delete by id"]["bm25 old text"] == [] and seen["iterators"]["rows"] > 3


def test_milvus_lites_grpc_server_behaves_as_the_embedded_engine(tmp_path):
    with MilvusServer(tmp_path / "server-data") as server:
        code, report = conformance(server.uri)
    assert code == 0, [b for b in report["behaviours"] if not b["same"]]
    assert observed(report)["hits keyed by the primary key"]["keys"] == ["chunk_id", "distance", "entity"]
