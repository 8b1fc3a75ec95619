"""The credentials of an http(s) clone URL against a real git server that asks for them: they reach git
through its environment only, so no file of the mirror and no process's command line ever holds them."""

from __future__ import annotations

import subprocess
from pathlib import Path
from urllib.parse import quote

import pytest

from cairn.schemas.config import GitSourceConfig
from cairn.sources import DiscoveryFailure, SourceError
from cairn.sources.git import GitSource
from tests.git_http_server import GitHttpServer
from tests.git_repo import Repo

USER = "deploy"
SECRET = "s3cret-token"
PAGE = "# {title}\n\nThe billing worker consumes the invoices queue; this page says how to {title}.\n"


@pytest.fixture
def served(tmp_path):
    """A repository with two runbooks, its bare copy served over HTTP to USER:SECRET only."""
    repo = Repo(tmp_path / "work")
    repo.write("runbooks/restart.md", PAGE.format(title="restart the worker"))
    repo.write("runbooks/drain.md", PAGE.format(title="drain the queue"))
    repo.commit("initial", "2025-01-10T09:00:00+00:00")
    bare = tmp_path / "served" / "infra.git"
    subprocess.run(["git", "clone", "--bare", "--quiet", str(repo.root), str(bare)], check=True, capture_output=True)
    with GitHttpServer(bare.parent, USER, SECRET) as server:
        yield repo, bare, server


def source(url: str, tmp_path: Path, cursor: dict | None = None) -> GitSource:
    config = GitSourceConfig(
        name="infra", type="git", tenant="acme", acl=["sre"], repo=url, cache_dir=str(tmp_path / "git-cache")
    )
    return GitSource(config, cursor)


def locators(git: GitSource) -> set[str]:
    return {r.locator for r in git.discover() if not isinstance(r, DiscoveryFailure)}


def files_holding(folder: Path, secret: str) -> list[str]:
    """Every file under `folder` whose bytes contain `secret`."""
    return sorted(
        str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()
    )


@pytest.mark.core
@pytest.mark.parametrize("password", [SECRET, SECRET + "/with:@%+ reserved"])
def test_a_clone_with_credentials_writes_them_nowhere_and_shows_them_on_no_command_line(
    served, tmp_path, password, monkeypatch
):
    _, _, server = served
    stored = tmp_path / "git-credentials"  # where the user's own credential helper would keep the token
    (tmp_path / "gitconfig").write_text(f"[credential]\n\thelper = store --file {stored}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    server.password = password  # the percent-encoded URL below must reach the server decoded
    server.watch = {SECRET}
    git = source(server.url("infra.git", f"{USER}:{quote(password, safe='')}"), tmp_path)
    assert locators(git) == {"runbooks/restart.md", "runbooks/drain.md"}
    assert (USER, password) in server.attempts  # the server did ask, and was answered
    assert files_holding(tmp_path / "git-cache", SECRET) == [] and not stored.exists()
    assert server.on_command_lines == set()
    assert git._git("config", "--get", "remote.origin.url").strip() == server.url("infra.git")


def test_a_later_sync_fetches_new_commits_with_the_same_credentials_and_still_stores_none(served, tmp_path):
    repo, bare, server = served
    url = server.url("infra.git", f"{USER}:{SECRET}")
    first = source(url, tmp_path)
    assert locators(first) == {"runbooks/restart.md", "runbooks/drain.md"}
    repo.write("runbooks/rotate.md", PAGE.format(title="rotate the credentials"))
    repo.commit("rotate", "2025-01-11T09:00:00+00:00")
    repo.git("push", "--quiet", str(bare), "main")
    second = source(url, tmp_path, first.cursor())
    assert locators(second) == {"runbooks/restart.md", "runbooks/drain.md", "runbooks/rotate.md"}
    assert second.head().sha == repo.git("rev-parse", "HEAD")
    assert files_holding(tmp_path / "git-cache", SECRET) == []
    assert server.on_command_lines == set()


def test_a_wrong_password_fails_without_prompting_or_showing_it(served, tmp_path):
    _, _, server = served
    wrong = "wr0ng-passw0rd"
    server.watch = {SECRET, wrong}
    git = source(server.url("infra.git", f"{USER}:{wrong}"), tmp_path)
    with pytest.raises(SourceError) as failed:  # git never prompts (GIT_TERMINAL_PROMPT=0): it fails
        list(git.discover())
    error = failed.value
    assert "Authentication failed" in str(error)  # the server's refusal, said, not a prompt
    assert wrong not in str(error) and USER not in str(error) and "infra.git" in str(error)
    assert (USER, wrong) in server.attempts  # refused by the server, not lost on the way
    assert server.on_command_lines == set()
    assert not (tmp_path / "git-cache").exists() or files_holding(tmp_path / "git-cache", wrong) == []


def test_a_mirror_made_with_the_token_in_its_config_is_rewritten_clean(served, tmp_path):
    _, _, server = served
    url = server.url("infra.git", f"{USER}:{SECRET}")
    first = source(url, tmp_path)
    locators(first)
    first._git("config", "remote.origin.url", url)  # what the old code left: the token in the mirror's config
    assert files_holding(tmp_path / "git-cache", SECRET) == ["infra.git/config"]
    again = source(url, tmp_path, first.cursor())
    assert locators(again) == {"runbooks/restart.md", "runbooks/drain.md"}
    assert again._git("config", "--get", "remote.origin.url").strip() == server.url("infra.git")
    assert files_holding(tmp_path / "git-cache", SECRET) == []
