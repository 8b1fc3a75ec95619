"""A git server that takes the connection and never answers fails the git source at its `timeout_seconds`, saying
so, and leaves no git process behind (from tests/unit/test_sources_deadlines.py: it runs git)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cairn.errors import SourceError
from cairn.schemas.config import GitSourceConfig
from cairn.sources.git import GitSource
from tests.stalling_server import StallingServer


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


@pytest.mark.core
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
