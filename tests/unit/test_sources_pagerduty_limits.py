"""A PagerDuty API that stalls or never ends fails its request, and so its source, with the reason."""

from __future__ import annotations

import time

import pytest

from cairn.sources.pagerduty.api import MAX_OFFSET, ApiError, PagerDutyApi, RetryPolicy
from tests.pagerduty_server import TOKEN, FakePagerDuty

INCIDENTS = [{"id": f"Q{n}", "created_at": "2026-01-01T00:00:00Z", "status": "resolved"} for n in range(40)]


def test_a_body_dripped_a_byte_at_a_time_is_cut_off_at_the_timeout_not_read_for_minutes():
    with FakePagerDuty(INCIDENTS, {}) as api:
        api.faults["/incidents"] = ["drip", "drip"]  # ~2 KB at a byte every 50 ms: well over a minute each
        client = PagerDutyApi(api.url, TOKEN, timeout=0.2, retry=RetryPolicy(attempts=2, base_seconds=0.01))
        with pytest.raises(
            ApiError, match=r"gave up after 2 attempts \(network error: the response took longer than 0.2 s\)"
        ):
            client.get("/incidents")
        answering = PagerDutyApi(api.url, TOKEN)  # the same server, answering: as before
        assert answering.get("/incidents", {"limit": 100})["incidents"] == INCIDENTS


def test_headers_dripped_a_byte_at_a_time_are_cut_off_at_the_timeout_not_read_for_a_minute():
    """`timeout_seconds` bounds an attempt from its connection to its last byte: headers that arrive a byte every
    50 ms (each read answered at once, so no per-read timeout ever fires) are given up on at the deadline."""
    with FakePagerDuty(INCIDENTS, {}) as api:
        api.faults["/incidents"] = ["drip-headers", "drip-headers"]  # ~1,300 bytes of headers: over a minute each
        client = PagerDutyApi(api.url, TOKEN, timeout=0.2, retry=RetryPolicy(attempts=2, base_seconds=0.01))
        with pytest.raises(
            ApiError, match=r"gave up after 2 attempts \(network error: the response took longer than 0.2 s\)"
        ):
            client.get("/incidents")
        assert len(api.requests) == 2
        # the client hung up mid-headers each time (a client reading on until the body would have let the server
        # send every header byte)
        for _ in range(200):  # a hang guard: the server sees the hang-up at its next byte
            if api.abandoned == 2:
                break
            time.sleep(0.05)
        assert api.abandoned == 2
        answering = PagerDutyApi(api.url, TOKEN)  # the same server, answering: as before
        assert answering.get("/incidents", {"limit": 100})["incidents"] == INCIDENTS


def test_an_api_that_says_more_for_ever_is_stopped_where_pagerduty_pagination_ends():
    full_page = [{**INCIDENTS[0], "id": f"P{n}"} for n in range(100)]  # PagerDuty's largest page: fewest requests
    with FakePagerDuty(full_page, {}) as api:
        api.endless = True
        client = PagerDutyApi(api.url, TOKEN, page_size=len(full_page))  # full pages, as PagerDuty sends
        seen = 0
        with pytest.raises(ApiError, match=r"still said `more` after 10,000 items"):
            for _ in client.pages("/incidents", "incidents"):
                seen += 1
        assert seen == MAX_OFFSET and len(api.requests) == MAX_OFFSET // len(full_page)
