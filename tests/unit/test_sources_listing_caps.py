"""What discovery may hold and how long it may take are capped per source: past `max_documents`, PagerDuty's
`max_listing_bytes` or `listing_budget_seconds` the source fails alone, saying which cap it met, however its
listing is stuck (a request that never ends included)."""

from __future__ import annotations

import json
import threading

import pytest

from cairn.errors import SourceError
from cairn.flows.discovery import Discoverer
from cairn.schemas.config import PagerDutySourceConfig, S3Config, WikiSourceConfig
from cairn.sources.pagerduty import PagerDutySource
from cairn.sources.pagerduty.api import ApiError, PagerDutyApi
from cairn.sources.wiki import WikiSource
from tests.pagerduty_server import TOKEN, FakePagerDuty
from tests.stalling_server import StallingServer

HANG_GUARD = 60  # seconds a test waits for a listing that should end within a second or two


def listed(source) -> Exception | object:
    """The run's discover step over `source`, in a thread watched by a hang guard: what it returned or raised."""
    outcome: list = []

    def discover() -> None:
        try:
            outcome.append(Discoverer().run(source))
        except Exception as exc:  # noqa: BLE001 - handed to the test
            outcome.append(exc)

    thread = threading.Thread(target=discover, daemon=True)
    thread.start()
    thread.join(HANG_GUARD)
    assert outcome, f"the listing was still running after {HANG_GUARD} s"
    return outcome[0]


def test_a_listing_stuck_inside_one_request_fails_at_the_listing_budget(monkeypatch, tmp_path):
    """An S3 endpoint that answers each read at once, a header byte at a time: boto3's read timeout never fires,
    and no document ever arrives for the budget to be checked against."""
    for key, value in {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    with StallingServer(drip=True) as stall:
        config = WikiSourceConfig(
            name="s3wiki", type="wiki", uri="s3://docs/wiki", tenant="acme", acl=["sre"], listing_budget_seconds=0.3
        )
        source = WikiSource(config, s3=S3Config(endpoint_url=stall.url, region="us-east-1", retry_attempts=1))
        failed = listed(source)
        assert isinstance(failed, SourceError)
        assert str(failed) == (
            "source 's3wiki' ran past its listing budget (0.3 s, listing_budget_seconds) while listing (0 documents "
            "listed, the listing itself not answering): nothing was indexed or removed for it this run"
        )


def test_a_folder_with_more_documents_than_max_documents_fails_its_source(tmp_path):
    for n in range(12):
        (tmp_path / f"page-{n:02}.md").write_text(f"# Page {n}\n\nbody\n")
    config = WikiSourceConfig(name="w", type="wiki", path=str(tmp_path), tenant="acme", acl=["sre"], max_documents=10)
    failed = listed(WikiSource(config))
    assert isinstance(failed, SourceError)
    assert str(failed) == (
        "source 'w' listed more than its max_documents (10): nothing was indexed or removed for it this run; "
        "raise max_documents if the source really holds that many, or narrow it"
    )
    config = config.model_copy(update={"max_documents": 12})
    assert len(listed(WikiSource(config)).refs) == 12  # at the cap: listed


def test_an_s3_listing_stops_paging_once_past_max_documents(s3, moto_endpoint):
    s3.create_bucket(Bucket="docs")
    for n in range(20):
        s3.put_object(Bucket="docs", Key=f"wiki/page-{n:02}.md", Body=f"# {n}\n".encode())
    config = WikiSourceConfig(
        name="s3wiki", type="wiki", uri="s3://docs/wiki", tenant="acme", acl=["sre"], max_documents=3
    )
    source = WikiSource(config, s3=S3Config(endpoint_url=moto_endpoint, page_size=2))
    pages = []
    source.store.client.meta.events.register("before-call.s3.ListObjectsV2", lambda **_: pages.append(1))
    failed = listed(source)
    assert isinstance(failed, SourceError) and "max_documents (3)" in str(failed)
    assert len(pages) == 2  # the second page took it past 3: no third asked for


def big_incidents(count: int, pad: int) -> list[dict]:
    return [
        {"id": f"Q{n}", "created_at": "2026-01-01T00:00:00Z", "status": "resolved", "description": "x" * pad}
        for n in range(count)
    ]


def test_an_api_listing_past_max_listing_bytes_fails_its_source_and_asks_for_no_more(monkeypatch):
    monkeypatch.setenv("PAGERDUTY_TOKEN", TOKEN)
    with FakePagerDuty(big_incidents(40, 1000), {}) as api:
        api.endless = True  # more, for ever, within PagerDuty's offset cap: 40 KB a page
        config = PagerDutySourceConfig(
            name="pd",
            type="pagerduty",
            api_url=api.url,
            tenant="acme",
            acl=["sre"],
            page_size=40,
            max_listing_bytes=100_000,
        )
        failed = listed(PagerDutySource(config))
        assert isinstance(failed, SourceError)
        assert str(failed) == (
            f"source 'pd': PagerDuty API at {api.url}: GET /incidents: the answers of this listing passed the "
            "source's max_listing_bytes (100,000 bytes): stopped (narrow the source with since/until or statuses, "
            "or raise max_listing_bytes)"
        )
        assert len(api.requests) == 3  # 2 pages held (~82 KB), the third refused as it was read


def test_one_answer_larger_than_its_cap_is_refused_while_it_is_read():
    with FakePagerDuty(big_incidents(40, 1000), {}) as api:
        client = PagerDutyApi(api.url, TOKEN)
        with pytest.raises(ApiError, match=r"GET /incidents: the answer is over 10,000 bytes"):
            client.get("/incidents", {"limit": 40}, max_bytes=10_000)
        assert len(client.get("/incidents", {"limit": 40}, max_bytes=100_000)["incidents"]) == 40


def test_an_export_whose_pages_pass_max_listing_bytes_fails_its_source_before_reading_them(tmp_path):
    for n in range(3):
        page = {"incidents": big_incidents(20, 1000)[n:]}
        (tmp_path / f"incidents-{n}.json").write_text(json.dumps(page))
    config = PagerDutySourceConfig(
        name="pd", type="pagerduty", path=str(tmp_path), tenant="acme", acl=["sre"], max_listing_bytes=30_000
    )
    failed = listed(PagerDutySource(config))
    assert isinstance(failed, SourceError)
    assert str(failed) == (
        "source 'pd': the export's incidents*.json files passed the source's max_listing_bytes (30,000 bytes) at "
        "incidents-1.json: stopped (split the export into sources, or raise max_listing_bytes)"
    )
