"""Every wait of a source has an end set by its configuration: an S3 endpoint or a git server that takes the
connection and never answers fails the source, saying which setting gave up, and leaves no process behind."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cairn.errors import SourceError
from cairn.schemas.config import GitSourceConfig, S3Config
from cairn.sources.blobs import S3Store
from cairn.sources.git import GitSource
from tests.stalling_server import StallingServer


def test_an_s3_endpoint_that_never_answers_fails_the_listing_at_its_read_timeout(aws_test_credentials):
    with StallingServer() as stall:
        s3 = S3Config(endpoint_url=stall.url, read_timeout_seconds=0.5, retry_attempts=2)
        store = S3Store("s3://docs/wiki", s3, source_name="w")
        with pytest.raises(SourceError) as failed:
            list(store.list((".md",)))
        assert str(failed.value) == (
            f"source 'w': cannot list s3://docs/wiki/: no answer from {stall.url} within [s3] read_timeout_seconds "
            "(0.5 s) after 2 attempts; check the endpoint and the network, or raise read_timeout_seconds"
        )
        assert stall.accepted == 2  # each attempt gave up on its connection
        assert stall.wait_for_hang_ups(2) == 2


def test_the_s3_timeouts_come_from_the_s3_table():
    from cairn.sources.blobs import s3_client

    client = s3_client(s3=S3Config(connect_timeout_seconds=3, read_timeout_seconds=7))
    assert (client.meta.config.connect_timeout, client.meta.config.read_timeout) == (3, 7)
    default = s3_client().meta.config
    assert (default.connect_timeout, default.read_timeout) == (10, 60)


def _git_processes(marker: str) -> list[str]:
    """Command lines of this user's processes that name `marker`."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            line = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in line and "git" in line:
            found.append(line)
    return found


def test_a_git_server_that_never_answers_fails_the_source_at_its_timeout_and_leaves_no_git_running(tmp_path):
    with StallingServer() as stall:
        repository = f"{stall.url}/stalled.git"
        config = GitSourceConfig(
            name="infra",
            type="git",
            repo=repository,
            tenant="acme",
            acl=["sre"],
            cache_dir=str(tmp_path / "git"),
            timeout_seconds=1,
        )
        with pytest.raises(SourceError) as failed:
            list(GitSource(config).discover())
        assert str(failed.value) == (
            f"source 'infra': git clone on {repository} timed out after 1 s (the source's timeout_seconds)"
        )
        assert stall.accepted >= 1
        # git and its HTTP helper are killed together (the helper, a child of git, would hold the connection)
        assert stall.wait_for_hang_ups(stall.accepted) == stall.accepted
        deadline = time.monotonic() + 10  # a hang guard: processes killed a moment ago may still be reaped
        while _git_processes(f"127.0.0.1:{stall.port}") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _git_processes(f"127.0.0.1:{stall.port}") == []
