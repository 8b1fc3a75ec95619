"""The embedded index's server process (index/liteserver.py) as its clients meet it over gRPC."""

from __future__ import annotations

import subprocess
import sys

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
