"""`cairn query --url` (cli/remote.py, cli/query.py): what is refused before anything is asked, where the key comes
from, and each refusal of the service as Cairn's one line and exit code (a real `cairn serve` answering it:
tests/integration/test_query_url.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.cli.app import main
from cairn.cli.query import QueryOptions, check_query
from cairn.cli.remote import KEY_ENV, check_url, read_key, refusal
from cairn.errors import RetrievalError, UsageError

URL = "http://127.0.0.1:8080"


@pytest.mark.parametrize(
    "options, message",
    [
        (QueryOptions(text="q", url=URL, tenant="acme", groups=("sre",)), "answers as its key's principal"),
        (QueryOptions(text="q", url=URL, groups=("sre",)), "answers as its key's principal"),
        (QueryOptions(queries=Path("q.jsonl"), url=URL), "--url asks one question"),
        (QueryOptions(text="q", tenant="acme", groups=("sre",), key_file=Path("k")), "--key-file is the key of"),
        (QueryOptions(text="q", url="ftp://host/x"), "--url must be http://host:port"),
        (QueryOptions(text="q", url="localhost:8080"), "--url must be http://host:port"),
        (QueryOptions(text="q", url="http://127.0.0.1:80x80"), "--url http://127.0.0.1:80x80"),
        (QueryOptions(text="q", url=URL + "/?k=3"), "without ?query or #fragment"),
    ],
)
def test_what_url_cannot_be_asked_with_is_refused_before_anything_is_sent(options, message):
    with pytest.raises(UsageError, match=message.replace("?", r"\?")):
        check_query(options)


def test_url_needs_no_principal_on_the_command_line():
    scope = check_query(QueryOptions(text="q", url=URL, k=3))
    assert scope.principal is None and scope.k == 3


def test_a_url_with_a_password_is_refused_without_showing_it():
    with pytest.raises(UsageError) as refused:
        check_url("http://bot:s3cret@127.0.0.1:8080")
    assert "s3cret" not in str(refused.value) and "--key-file" in str(refused.value)
    assert check_url(URL + "/") == URL  # a trailing slash: the same service


def test_the_key_comes_from_its_file_else_the_environment(tmp_path, monkeypatch):
    key_file = tmp_path / "demo.key"
    key_file.write_text("key-from-file\n")
    monkeypatch.setenv(KEY_ENV, "key-from-env")
    assert read_key(key_file) == "key-from-file"
    assert read_key(None) == "key-from-env"
    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(UsageError, match="--key-file PATH .* or \\$CAIRN_KEY"):
        read_key(None)
    with pytest.raises(UsageError, match="cannot read it"):
        read_key(tmp_path / "missing.key")


def test_a_key_that_would_break_the_header_is_refused_without_being_shown(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "abc\x1b[2Jdef")
    with pytest.raises(UsageError) as refused:
        read_key(None)
    assert "abc" not in str(refused.value) and "$CAIRN_KEY" in str(refused.value)


@pytest.mark.parametrize(
    "status, kind, said",
    [
        (400, UsageError, "as_of: not a date"),  # the caller's value: the command's own line for it
        (422, UsageError, "as_of: not a date"),
        (413, UsageError, "as_of: not a date"),
        (401, UsageError, "refused the key (as_of: not a date): check --key-file or $CAIRN_KEY"),
        (404, RetrievalError, "no Cairn service at"),
        (429, RetrievalError, "refused the question for now (429: as_of: not a date); try again in 7 s"),
        (503, RetrievalError, "could not answer (503: as_of: not a date)"),
        (500, RetrievalError, "could not answer (500: as_of: not a date)"),
        (307, RetrievalError, "redirects (307) to http://elsewhere/x: not followed"),
    ],
)
def test_each_refusal_of_the_service_is_one_line_and_exit_2(status, kind, said):
    error = refusal(URL, status, "as_of: not a date", location="http://user:pw@elsewhere/x", wait="7")
    assert isinstance(error, kind) and said in str(error) and "\n" not in str(error)
    assert error.exit_code == 2 and "pw" not in str(error)


def test_an_unreachable_service_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch):
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv(KEY_ENV, "k")
    assert main(["query", "q", "--url", f"http://127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"cairn: cannot reach the service at http://127.0.0.1:{port}: ") and err.count("\n") == 1
