"""index.milvus.Connection against a real Lite folder's shared server (moved from tests/unit/test_index_connection.py:
each test starts the Lite server): the client and this process's lease (index/liteserver.py), released exactly once
whoever closes it and however often; and the readers that open the serving generation through one
(index/generations.py open_serving) keep no lease after closing."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.errors import NoCollection
from cairn.index import liteserver
from cairn.index.generations import open_serving
from cairn.index.milvus import Connection
from cairn.schemas.config import MilvusConfig, load_config
from tests.conftest import write_config


@pytest.fixture
def milvus(tmp_path) -> MilvusConfig:
    return MilvusConfig(uri=str(tmp_path / "index" / "cairn.db"))


@pytest.mark.core
def test_closing_a_connection_releases_its_lease_once_and_a_second_close_changes_nothing(milvus):
    folder = Path(milvus.uri)
    first, second = Connection.open(milvus, create=True), Connection.open(milvus, create=True)
    assert liteserver.leases(folder) == 2
    first.close()
    first.close()  # harmless: the other connection's lease is not taken with it
    assert liteserver.leases(folder) == 1
    assert second.client.list_collections() == []  # still served
    with second:
        pass
    second.close()
    assert liteserver.leases(folder) == 0


@pytest.mark.core
def test_opening_an_index_that_serves_nothing_is_no_collection_and_keeps_no_lease(milvus):
    Connection.open(milvus, create=True).close()  # an index folder with no collection in it
    with pytest.raises(NoCollection, match="no collection 'cairn' at .*: run `cairn ingest`"):
        open_serving(milvus)
    assert liteserver.leases(Path(milvus.uri)) == 0


@pytest.mark.core
def test_the_report_of_an_index_serving_nothing_lets_go_of_the_index(tmp_path):
    from cairn.quality import quality_report

    config = load_config(write_config(tmp_path / "c.toml", tmp_path / "index", []))
    Connection.open(config.milvus, create=True).close()
    with pytest.raises(NoCollection):
        quality_report(config, 384)
    assert liteserver.leases(Path(config.milvus.uri)) == 0  # a long-lived worker's index server can idle out
