"""`cairn query --url URL`: one question asked of a running `cairn serve` (docs/service.md) instead of the index.

The command then opens nothing itself: no configuration, no index, no model, no pymilvus; Python's own
http.client and json. The service answers as the principal its bearer key maps to (`--key-file`, or
$CAIRN_KEY), with the `POST /v1/retrieve` JSON, which is the `query --json` object plus `query_id`: the command
prints it exactly as an answer computed in its own process is printed. A refusal of the service becomes Cairn's
one line and exit code: the caller's value (400, 413, 422) as the same UsageError the command would raise itself,
a key refused (401) as one too, a service that is busy, down or failing (429, 503, 5xx) or cannot be reached as a
RetrievalError (exit 2). The key never appears in a message; the URL is shown without a user or password. No
redirect is followed (it would carry the key elsewhere).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cairn.errors import RetrievalError, UsageError
from cairn.redact import redact

KEY_ENV = "CAIRN_KEY"
TIMEOUT_SECONDS = 300.0  # a hang guard: the service answers within its own [serve] timeout_seconds
MAX_ANSWER_BYTES = 64 * 1024 * 1024
RETRIEVE_PATH = "/v1/retrieve"


def read_key(key_file: Path | None) -> str:
    """The bearer key: the first line of `key_file` (as `cairn new-key --key-file` writes it), else $CAIRN_KEY."""
    if key_file is not None:
        try:
            key = key_file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or type(exc).__name__
            raise UsageError(f"--key-file {key_file}: cannot read it ({reason})") from None
        where = f"--key-file {key_file}"
    else:
        key, where = os.environ.get(KEY_ENV, "").strip(), f"${KEY_ENV}"
        if not key:
            raise UsageError(
                f"--url needs the service's bearer key: --key-file PATH (as `cairn new-key --key-file` writes it) "
                f"or ${KEY_ENV}"
            )
    if not key or not key.isprintable() or not key.isascii():
        raise UsageError(f"{where} holds no usable key (one line of printable ASCII)")
    return key


def check_url(url: str) -> str:
    """The service's base URL, checked: http(s)://host[:port][/prefix], no user, password, query or fragment."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a port that is no number raises here
    except ValueError as exc:
        raise UsageError(f"--url {redact(url)}: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(
            f"--url must be http://host:port or https://host:port (a running `cairn serve`), got {redact(url)}"
        )
    if parts.username is not None or parts.password is not None:
        raise UsageError(
            f"--url must not carry a user or password ({redact(url)}): the key goes in --key-file or ${KEY_ENV}"
        )
    if parts.query or parts.fragment:
        raise UsageError(f"--url is the service's address alone, without ?query or #fragment: {url}")
    return url.rstrip("/")


def ask(url: str, key: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST `body` to the service's /v1/retrieve as the key's principal: its answer (the `query --json` object,
    `query_id` removed), or the service's refusal as a CairnError of one line."""
    import http.client

    parts = urlsplit(url)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = kind(parts.hostname or "", parts.port, timeout=TIMEOUT_SECONDS)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json", "Accept": "application/json"}
    try:
        connection.request("POST", parts.path + RETRIEVE_PATH, body=json.dumps(body).encode("utf-8"), headers=headers)
        response = connection.getresponse()
        raw = response.read(MAX_ANSWER_BYTES + 1)
        status, location, wait = response.status, response.getheader("Location"), response.getheader("Retry-After")
    except (OSError, http.client.HTTPException) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise RetrievalError(f"cannot reach the service at {url}: {reason}") from None
    finally:
        connection.close()
    if len(raw) > MAX_ANSWER_BYTES:
        raise RetrievalError(f"the service at {url} answered more than {MAX_ANSWER_BYTES} bytes")
    try:
        data = json.loads(raw)
    except ValueError:
        data = None
    if status == 200 and isinstance(data, dict) and isinstance(data.get("results"), list):
        data.pop("query_id", None)  # the service's handle for feedback: not part of `query --json`
        return data
    error = data.get("error") if isinstance(data, dict) else None
    raise refusal(url, status, str(error) if error else f"no Cairn answer ({len(raw)} bytes)", location, wait)


def refusal(url: str, status: int, error: str, location: str | None = None, wait: str | None = None) -> Exception:
    """The service's refusal as the error the command stops with (its one line and exit code)."""
    if status in (400, 413, 422):  # the caller's value: the line the command would print for it itself
        return UsageError(error)
    if status == 401:
        return UsageError(f"the service at {url} refused the key ({error}): check --key-file or ${KEY_ENV}")
    if 300 <= status < 400:
        return RetrievalError(
            f"the service at {url} redirects ({status}) to {redact(location or '?')}: not followed (it would carry "
            "the key there); give --url the address the service answers at"
        )
    if status == 404:
        return RetrievalError(
            f"no Cairn service at {url} ({RETRIEVE_PATH} answered 404): give --url the address of a `cairn serve`"
        )
    if status == 429:
        later = f"; try again in {wait} s" if wait and wait.isdigit() else ""
        return RetrievalError(f"the service at {url} refused the question for now (429: {error}){later}")
    return RetrievalError(f"the service at {url} could not answer ({status}: {error})")
