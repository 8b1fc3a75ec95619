"""index.milvus.Connection: a connection that cannot open holds no lease on the Lite folder's shared server
(index/liteserver.py). Its leases against a running server, released exactly once, and the readers that open the
serving generation through one: tests/integration/test_index_connection.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.errors import StoreError
from cairn.index import liteserver
from cairn.index.milvus import Connection
from cairn.schemas.config import MilvusConfig


def test_a_connection_that_cannot_open_holds_no_lease(tmp_path):
    milvus = MilvusConfig(uri=str(tmp_path / "index" / "cairn.db"))
    with pytest.raises(StoreError, match="no index at"):
        Connection.open(milvus, create=False)
    assert liteserver.leases(Path(milvus.uri)) == 0
