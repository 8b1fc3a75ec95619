"""flows/prestart.py: the server of an existing embedded index set starting before a run's modules import, with
a real Milvus Lite server process."""

from __future__ import annotations

import pytest

from cairn.flows.prestart import start_index_server
from cairn.index import liteserver
from cairn.schemas.config import MilvusConfig

pytestmark = pytest.mark.slow


def test_the_server_of_an_existing_index_is_started_ahead_of_the_run_and_leased_by_this_process(tmp_path):
    folder = tmp_path / "index" / "cairn.db"
    folder.parent.mkdir()
    liteserver.connect(folder, idle_seconds=30)  # the index exists, its server idled out since
    liteserver.release(folder)
    liteserver.stop(folder)
    assert liteserver.serving(folder) is None
    try:
        thread = start_index_server(MilvusConfig(uri=str(folder)))
        assert thread is not None
        thread.join(300)  # a hang guard
        assert liteserver.serving(folder) is not None and liteserver.leases(folder) == 1
        uri = liteserver.connect(folder, idle_seconds=30)  # the run's own connection: the same server
        assert uri.startswith("unix:") and liteserver.leases(folder) == 2
        liteserver.release(folder)
    finally:
        liteserver.release(folder)
        liteserver.stop(folder)
