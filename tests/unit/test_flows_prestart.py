"""flows/prestart.py: what a run from the shell does not start ahead of itself. Starting a real index server:
tests/integration/test_prestart.py."""

from __future__ import annotations

from cairn.flows.prestart import start_index_server
from cairn.schemas.config import MilvusConfig


def test_an_index_the_run_will_create_is_not_started_ahead(tmp_path):
    assert start_index_server(MilvusConfig(uri=str(tmp_path / "index" / "cairn.db"))) is None
    assert not (tmp_path / "index").exists()  # nothing made: the run creates the index as it always did


def test_a_milvus_server_is_not_started_ahead():
    assert start_index_server(MilvusConfig(uri="http://127.0.0.1:1")) is None
