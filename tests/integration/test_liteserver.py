"""The embedded index's server process (index/liteserver.py) as its clients meet it over gRPC."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# A client that pings as often as gRPC lets it, idle between two calls. gRPC's C core writes a GOAWAY it
# receives to the process's stderr ("too_many_pings"), which is what every Cairn process printed mid-ingest.
EAGER_CLIENT = r"""
import sys, time
import grpc
from pymilvus.grpc_gen import milvus_pb2, milvus_pb2_grpc

channel = grpc.insecure_channel(sys.argv[1], options=[
    ("grpc.keepalive_time_ms", 300), ("grpc.keepalive_timeout_ms", 5000),
    ("grpc.keepalive_permit_without_calls", 1), ("grpc.http2.max_pings_without_data", 0)])
stub = milvus_pb2_grpc.MilvusServiceStub(channel)
print(stub.GetVersion(milvus_pb2.GetVersionRequest(), timeout=120).version)
time.sleep(4)  # about 13 pings with no data between them
print(stub.GetVersion(milvus_pb2.GetVersionRequest(), timeout=120).version)
"""


@pytest.mark.core
def test_a_client_that_pings_while_idle_is_never_sent_away(tmp_path):
    from cairn.index import liteserver

    folder = tmp_path / "index" / "cairn.db"
    folder.parent.mkdir()
    uri = liteserver.connect(folder, idle_seconds=30)
    try:
        client = subprocess.run([sys.executable, "-c", EAGER_CLIENT, uri], capture_output=True, text=True, timeout=300)
    finally:
        liteserver.release(folder)
        liteserver.stop(folder)
    assert client.returncode == 0, client.stderr
    assert len(client.stdout.split()) == 2  # both calls answered
    assert "too_many_pings" not in client.stderr and "GOAWAY" not in client.stderr, client.stderr


def test_a_long_lived_retriever_answers_the_first_question_after_its_index_server_was_killed(tmp_path, prefect_server):
    import os
    import signal

    from cairn.flows.ingest import ingest_flow
    from cairn.query import Principal, Retriever
    from cairn.schemas.config import load_config
    from tests.integration import corpus

    _, config_path = corpus.acme_wiki(tmp_path)
    ingest_flow(config_path=str(config_path))
    record = Path(load_config(config_path).milvus.uri + ".server")  # the server's pid while it serves
    retriever = Retriever.from_config(config_path)
    sre = Principal("acme", ["sre"])
    try:
        assert retriever.retrieve("settlement-writer consumer lag on payments.settled", sre, k=3).hits
        for _ in range(2):  # killed twice: each time the next question is answered, by a server started anew
            pid = json.loads(record.read_text())["pid"]
            os.kill(pid, signal.SIGKILL)  # as the out-of-memory killer would
            result = retriever.retrieve("settlement-writer consumer lag on payments.settled", sre, k=3)
            assert result.hits and json.loads(record.read_text())["pid"] != pid
    finally:
        retriever.close()
