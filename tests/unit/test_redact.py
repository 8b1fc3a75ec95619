"""cairn.redact and where it is applied: the credentials of a URL never reach a message or a stored URI."""

from __future__ import annotations

import pytest

from cairn.errors import SourceError
from cairn.redact import redact
from cairn.schemas.config import GitSourceConfig
from cairn.sources.git import GitSource


@pytest.mark.parametrize(
    "text,shown",
    [
        ("https://user:tok3n@git.example/org/repo.git", "https://git.example/org/repo.git"),
        ("fatal: unable to access 'https://x:y@h/r/': 403", "fatal: unable to access 'https://h/r/': 403"),
        ("ssh://deploy@host:22/r.git and http://a:b@c/d", "ssh://host:22/r.git and http://c/d"),
        ("git@github.com:o/r.git", "git@github.com:o/r.git"),  # scp-like: a user name, no secret
        ("http://127.0.0.1:19530", "http://127.0.0.1:19530"),
    ],
)
def test_redact_removes_the_user_info_of_every_url(text, shown):
    assert redact(text) == shown


def test_a_clone_url_with_a_token_never_reaches_a_message_or_a_citation(tmp_path):
    secret = "ghp_s3cr3tT0k3n"
    config = GitSourceConfig(
        name="infra",
        type="git",
        tenant="acme",
        acl=["sre"],
        cache_dir=str(tmp_path),
        repo=f"http://deploy:{secret}@127.0.0.1:9/org/infra.git",
    )
    source = GitSource(config)
    with pytest.raises(SourceError) as err:
        list(source.discover())
    assert secret not in str(err.value) and "deploy" not in str(err.value)
    assert source._repo_uri() == "http://127.0.0.1:9/org/infra.git"
