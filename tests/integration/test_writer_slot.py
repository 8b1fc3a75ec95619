"""One writer per index on a Milvus server when a Prefect server is configured: a Prefect global concurrency
limit of 1 per index (flows/concurrency.py), which a second run waits on, then fails with IndexBusy."""

from __future__ import annotations

import threading
from urllib.parse import urlsplit

import pytest

from cairn.errors import IndexBusy
from cairn.flows.concurrency import index_writer, limit_name
from cairn.schemas.config import MilvusConfig
from tests.http_proxy import FaultyProxy


def test_a_second_writer_of_one_server_collection_waits_on_the_prefect_limit_then_is_refused(prefect_server):
    from prefect.client.orchestration import get_client

    config = MilvusConfig(uri="http://127.0.0.1:19530", collection="runbooks")  # the slot needs no Milvus
    other = MilvusConfig(uri="http://127.0.0.1:19530", collection="contracts")
    holding, release = threading.Event(), threading.Event()

    def first_run():
        with index_writer(config, wait_seconds=5):
            holding.set()
            release.wait(30)

    thread = threading.Thread(target=first_run)
    thread.start()
    try:
        assert holding.wait(30)
        with pytest.raises(IndexBusy, match=r"collection 'runbooks' is being written by another Cairn run"):
            with index_writer(config, wait_seconds=1):
                pass
        with index_writer(other, wait_seconds=1):  # another collection: a limit of its own
            pass
    finally:
        release.set()
        thread.join(30)
    with index_writer(config, wait_seconds=5):  # released: the next run has it
        pass
    with get_client(sync_client=True) as client:
        limit = client.read_global_concurrency_limit_by_name(limit_name(config))
    assert limit.limit == 1 and limit.active_slots == 0 and "19530" not in limit.name


@pytest.mark.core
def test_a_run_alone_gets_the_slot_however_slowly_the_prefect_server_answers(prefect_server):
    """`--wait 0` means "do not queue behind another run", not "the server answers within a second": behind a
    link that delays every request by 1.5 s, a run alone still gets its slot (CI's loaded machine once refused
    such a run as busy: Prefect's acquisition timeout had been bounding the HTTP round trips too)."""
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    config = MilvusConfig(uri="http://127.0.0.1:19530", collection="slowlink")
    api = urlsplit(PREFECT_API_URL.value())
    with FaultyProxy(f"{api.scheme}://{api.netloc}", failures=0, delay_seconds=1.5) as link:
        with temporary_settings({PREFECT_API_URL: f"{link.url}{api.path}"}):
            with index_writer(config, wait_seconds=0):
                with get_client(sync_client=True) as client:
                    held = client.read_global_concurrency_limit_by_name(limit_name(config)).active_slots
    assert held == 1
    assert any("increment-with-lease" in r["path"] for r in link.requests), link.requests  # through the slow link
