"""`cairn mcp` as an MCP client runs it: a subprocess spoken to over stdio, through the SDK's own client (and once
byte for byte), over the two-tenant corpus written straight into a Lite index (tests/integration/corpus.py)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from cairn.serve.mcp import MAX_K
from tests.conftest import REPO, write_config
from tests.integration import corpus

HANG_GUARD = 600  # seconds: a hang guard, not a speed limit (a busy 2-core machine is slow)
LEDGER = "how do I promote the ledger replica"
CLIENT = {"name": "test_mcp", "version": "0"}


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> Path:
    return corpus.index_directly(tmp_path_factory.mktemp("mcp"))


def command(config: Path, tenant: str, *groups: str, flags: tuple[str, ...] = ()) -> list[str]:
    """`cairn [flags] mcp ...` as a client's config would launch it (the same interpreter as the tests)."""
    caller = [arg for group in groups for arg in ("--group", group)]
    return [sys.executable, "-m", "cairn.cli", *flags, "mcp", "--config", str(config), "--tenant", tenant, *caller]


@asynccontextmanager
async def connected(argv: list[str], errlog: Path) -> AsyncIterator[Client]:
    """The SDK's client on the server `argv` starts (its stderr in `errlog`, shown when a test fails)."""
    params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(REPO), env=dict(os.environ))
    with open(errlog, "w", encoding="utf-8") as log:
        async with Client(stdio_client(params, errlog=log), read_timeout_seconds=HANG_GUARD) as client:
            yield client


def session(argv: list[str], errlog: Path, talk: Callable[[Client], Awaitable[Any]]) -> Any:
    async def run() -> Any:
        async with connected(argv, errlog) as client:
            return await talk(client)

    return anyio.run(run)


def titles(reply) -> list[str]:
    return [r["title"] for r in reply.structured_content["results"]]


@pytest.mark.core
def test_search_lists_its_schema_answers_with_citations_and_survives_a_bad_argument(config, tmp_path):
    async def talk(client: Client):
        listed = await client.list_tools()
        first = await client.call_tool("search", {"query": LEDGER})
        refused = await client.call_tool("search", {"query": LEDGER, "k": MAX_K + 1})
        again = await client.call_tool("search", {"query": LEDGER, "k": 1})
        return listed, first, refused, again

    listed, first, refused, again = session(command(config, "acme", "sre"), tmp_path / "err.log", talk)

    assert [tool.name for tool in listed.tools] == ["search"]
    schema = listed.tools[0].input_schema
    assert set(schema["properties"]) == {"query", "k", "doc_tag", "as_of"} and schema["required"] == ["query"]
    k = schema["properties"]["k"]
    assert (k["type"], k["minimum"], k["maximum"]) == ("integer", 1, MAX_K)

    assert not first.is_error
    text = first.content[0].text
    assert text.startswith("confidence: ")
    # the page is one section: the match is cited under the heading holding it, not as the bare title (#53)
    assert "[1] Ledger DB failover › Promote the replica (" in text and "file:///wiki/acme/ledger-failover.md#" in text
    assert "pg_ctl promote" in text
    assert first.structured_content["status"] == "ok" and titles(first)[0] == "Ledger DB failover"
    assert "diagnostics" not in first.structured_content

    assert refused.is_error and [c.text for c in refused.content] == [f"k: a whole number from 1 to {MAX_K}, got 51"]
    assert not again.is_error and titles(again) == ["Ledger DB failover"]  # the same server, k honoured


def test_a_globex_caller_never_sees_acme_pages_and_cannot_name_another_tenant(config, tmp_path):
    async def talk(client: Client):
        ledger = await client.call_tool("search", {"query": LEDGER})
        scanner = await client.call_tool("search", {"query": "restart the scanner-gateway pods in depot-east"})
        posing = await client.call_tool("search", {"query": LEDGER, "tenant": "acme", "groups": ["sre"]})
        with pytest.raises(MCPError, match="unknown tool 'read_page'"):  # a protocol error, not a tool's
            await client.call_tool("read_page", {"uri": "file:///wiki/acme/ledger-failover.md"})
        return ledger, scanner, posing

    ledger, scanner, posing = session(command(config, "globex", "globex-ops"), tmp_path / "err.log", talk)

    assert not ledger.is_error
    assert all(r["source_uri"].startswith("file:///wiki/globex/") for r in ledger.structured_content["results"])
    assert "acme" not in ledger.content[0].text and "pg_ctl" not in ledger.content[0].text
    assert titles(scanner)[0] == "Warehouse scanner API"  # the caller does see its own tenant's pages
    assert posing.is_error and posing.content[0].text.startswith("unknown argument 'groups'")


def test_the_structured_content_is_what_cairn_query_json_prints_and_groups_still_apply(config, tmp_path):
    question = [LEDGER, "--tenant", "acme", "--group", "sre", "--k", "3", "--as-of", "2026-01-01"]
    printed = subprocess.run(
        [sys.executable, "-m", "cairn.cli", "query", *question, "--config", str(config), "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
    )
    assert printed.returncode == 0, printed.stderr

    async def talk(client: Client):
        same = await client.call_tool("search", {"query": LEDGER, "k": 3, "as_of": "2026-01-01"})
        secret = await client.call_tool("search", {"query": "revoke the leaked vault token zebra-orchid-42"})
        bad_date = await client.call_tool("search", {"query": LEDGER, "as_of": "last tuesday"})
        return same, secret, bad_date

    same, secret, bad_date = session(command(config, "acme", "sre"), tmp_path / "err.log", talk)

    assert same.structured_content == json.loads(printed.stdout)
    # a security-only page, and the caller is sre
    assert "Rotate leaked credentials" not in titles(secret) and "Revoke the leaked" not in secret.content[0].text
    assert bad_date.is_error and bad_date.content[0].text.startswith("as_of: 'last tuesday' is not an ISO date")


def lines_of(stream) -> queue.Queue[str | None]:
    """The lines a pipe delivers, on a queue (None at its end), so that a test can wait for one with a limit."""
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        for line in stream:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def reply_to(stdout: queue.Queue[str | None]) -> dict:
    """The next reply on the server's stdout (notifications skipped); a line that is not JSON fails the test."""
    while True:
        line = stdout.get(timeout=HANG_GUARD)
        assert line is not None, "the server closed stdout before replying"
        message = json.loads(line)
        if "id" in message:
            return message


def test_stdout_carries_only_the_protocol_and_the_logs_go_to_stderr(config, tmp_path):
    """The handshake most clients send today (initialize, protocol 2025-06-18), byte for byte, with --verbose so
    that Cairn logs every search: each line on stdout must be a JSON-RPC message, each reply the request's."""
    requests = [
        {"method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": CLIENT}},
        {"method": "notifications/initialized"},
        {"method": "tools/list"},
        {"method": "tools/call", "params": {"name": "search", "arguments": {"query": LEDGER}}},
    ]
    replies, rest = [], []
    with open(tmp_path / "err.log", "w", encoding="utf-8") as errlog:
        server = subprocess.Popen(
            command(config, "acme", "sre", flags=("--verbose",)),
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
            text=True,
        )
        stdout = lines_of(server.stdout)
        try:
            for number, request in enumerate(requests, 1):
                message = {
                    "jsonrpc": "2.0",
                    **request,
                    **({} if "notifications/" in request["method"] else {"id": number}),
                }
                server.stdin.write(json.dumps(message) + "\n")
                server.stdin.flush()
                if "id" in message:  # its reply before the next request: a client that closes stdin early loses it
                    replies.append(reply_to(stdout))
            server.stdin.close()  # how a client ends the session: the server exits on its own
            assert server.wait(timeout=HANG_GUARD) == 0
            while (line := stdout.get(timeout=HANG_GUARD)) is not None:
                rest.append(line)
        finally:
            if server.poll() is None:
                server.kill()

    assert [r["id"] for r in replies] == [1, 3, 4] and all(r["jsonrpc"] == "2.0" and "result" in r for r in replies)
    assert replies[0]["result"]["protocolVersion"] == "2025-06-18"
    assert [t["name"] for t in replies[1]["result"]["tools"]] == ["search"]
    call = replies[2]["result"]
    assert not call.get("isError") and call["structuredContent"]["results"][0]["title"] == "Ledger DB failover"
    assert rest == []  # nothing after the last reply
    logged = (tmp_path / "err.log").read_text(encoding="utf-8")
    assert '"event": "query"' in logged  # --verbose's telemetry: on stderr, never on the wire


def test_a_server_that_cannot_open_the_index_exits_2_before_speaking(tmp_path):
    empty = write_config(tmp_path / "empty.toml", tmp_path / "index", [])
    done = subprocess.run(
        command(empty, "acme", "sre"), cwd=REPO, input="", capture_output=True, text=True, timeout=HANG_GUARD
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("cairn: no index at ") and "run `cairn ingest` first" in done.stderr
    assert "Traceback" not in done.stderr


def with_serve(config: Path, tmp_path: Path, *lines: str) -> Path:
    """The module's config (the same index) with a [serve] table of `lines`."""
    changed = tmp_path / "serve.toml"
    changed.write_text(config.read_text(encoding="utf-8") + "\n[serve]\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return changed


def test_stdio_is_held_to_the_service_limits_and_its_deadline(config, tmp_path):
    """Issue #51: `cairn mcp` kept a turn lock, an error mapping and bounds of its own and had no per-question
    deadline; it now answers through the service core, as the HTTP service does."""

    async def talk(client: Client):
        listed = await client.list_tools()
        too_many = await client.call_tool("search", {"query": LEDGER, "k": 4})
        too_long = await client.call_tool("search", {"query": "ledger " * 20})
        nul = await client.call_tool("search", {"query": LEDGER, "doc_tag": "a\x00"})
        fine = await client.call_tool("search", {"query": LEDGER, "k": 3})
        return listed, too_many, too_long, nul, fine

    limited = with_serve(config, tmp_path, "max_k = 3", "max_query_chars = 100")
    listed, too_many, too_long, nul, fine = session(command(limited, "acme", "sre"), tmp_path / "err.log", talk)
    schema = listed.tools[0].input_schema["properties"]
    assert (schema["k"]["maximum"], schema["query"]["maxLength"]) == (3, 100)
    assert too_many.is_error and too_many.content[0].text == "k: a whole number from 1 to 3, got 4"
    assert too_long.is_error and too_long.content[0].text.startswith("query: at most 100 characters")
    assert nul.is_error and "NUL" in nul.content[0].text
    assert not fine.is_error and titles(fine)[0] == "Ledger DB failover" and "query_id" not in fine.structured_content

    async def overrun(client: Client):
        return await client.call_tool("search", {"query": LEDGER})

    hurried = with_serve(config, tmp_path, "timeout_seconds = 0.001")  # no retrieval finishes in a millisecond
    late = session(command(hurried, "acme", "sre"), tmp_path / "err2.log", overrun)
    # overrun, or (on a loaded machine) still waiting for its turn at the deadline: a 503 either way, never a hang
    assert late.is_error and late.content[0].text.endswith("within 0.001 s"), late.content[0].text
