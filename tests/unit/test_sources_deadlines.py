"""Every wait of a source has an end set by its configuration: an S3 endpoint that takes the connection and never
answers fails the source, saying which setting gave up (the git server's case runs git, a process of its own:
tests/integration/test_git_deadline.py)."""

from __future__ import annotations

import pytest

from cairn.errors import SourceError
from cairn.schemas.config import S3Config
from cairn.sources.blobs import S3Store
from tests.stalling_server import StallingServer


def test_an_s3_endpoint_that_never_answers_fails_the_listing_at_its_read_timeout(aws_test_credentials):
    with StallingServer() as stall:
        s3 = S3Config(endpoint_url=stall.url, read_timeout_seconds=0.2, retry_attempts=2)
        store = S3Store("s3://docs/wiki", s3, source_name="w")
        with pytest.raises(SourceError) as failed:
            list(store.list((".md",)))
        assert str(failed.value) == (
            f"source 'w': cannot list s3://docs/wiki/: no answer from {stall.url} within [s3] read_timeout_seconds "
            "(0.2 s) after 2 attempts; check the endpoint and the network, or raise read_timeout_seconds"
        )
        assert stall.accepted == 2  # each attempt gave up on its connection
        assert stall.wait_for_hang_ups(2) == 2


def test_the_s3_timeouts_come_from_the_s3_table():
    from cairn.sources.blobs import s3_client

    client = s3_client(s3=S3Config(connect_timeout_seconds=3, read_timeout_seconds=7))
    assert (client.meta.config.connect_timeout, client.meta.config.read_timeout) == (3, 7)
    default = s3_client().meta.config
    assert (default.connect_timeout, default.read_timeout) == (10, 60)
