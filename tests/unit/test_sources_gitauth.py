"""Which clone addresses have their credentials moved out of the URL: http(s) user info only, decoded."""

from __future__ import annotations

import pytest

from cairn.sources.gitauth import split_credentials


def test_an_http_url_loses_its_user_info_to_the_environment_percent_decoded():
    auth = split_credentials("https://deploy:p%40ss%2Fw%3Ard@git.example:8443/org/infra.git")
    assert auth.url == "https://git.example:8443/org/infra.git"
    assert auth.env == {"CAIRN_GIT_USERNAME": "deploy", "CAIRN_GIT_PASSWORD": "p@ss/w:rd"}
    assert auth.options()[:2] == ["-c", "credential.helper="]  # the user's own helpers dropped first
    assert not any("p@ss" in option for option in auth.options())


def test_a_token_given_as_the_user_name_is_moved_too():
    auth = split_credentials("HTTP://ghp_t0ken@git.example/org/infra.git")
    assert auth.url == "HTTP://git.example/org/infra.git" and auth.env["CAIRN_GIT_USERNAME"] == "ghp_t0ken"


@pytest.mark.parametrize(
    "repo",
    [
        "ssh://deploy@git.example:22/org/infra.git",
        "git@github.com:org/infra.git",
        "/srv/git/infra",
        "infra.bundle",
        "https://git.example/org/infra.git",
    ],
)
def test_ssh_urls_local_paths_bundles_and_plain_urls_are_given_to_git_as_they_are(repo):
    auth = split_credentials(repo)
    assert auth.url == repo and auth.env == {} and auth.options() == []
