"""`cairn mcp`: the query module as one MCP tool, `search`, served over stdio to the MCP client that launches it
(an IDE, a chat application, an agent). docs/service.md, "MCP (stdio)".

Who asks is fixed when the server starts (`--tenant`, `--group`): the tool's arguments narrow the question, never
the caller, so a model cannot read past the access of the person who configured the client. An argument the
tool does not take (`tenant`, say) is refused, not ignored.

One core for every transport: `search()` below answers a call of the tool for `cairn mcp` (stdio) and for the
HTTP service's `/mcp` (serve/mcp_http.py) alike, through serve/service.py's Service as `POST /v1/retrieve` is
answered: the same `[serve] max_k` and `max_query_chars`, the same per-question deadline, error mapping and
metrics.

Built on the SDK's low-level `Server` rather than `MCPServer`: the input schema is written here (its bounds and
`additionalProperties: false` are what the client sees), arguments are checked here so that a bad one comes back
as a tool error of one line the model can act on (MCPServer's are pydantic's multi-line reports), and nothing
configures the process's logging (MCPServer's constructor installs a root handler).

stdout is the protocol's alone: the SDK points fd 1 at stderr while it serves, and the Retriever opens before
that with fd 1 pointed at stderr here, so nothing the engine or the model prints while loading reaches the wire.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import anyio
from mcp import types
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

import cairn
from cairn.errors import UsageError
from cairn.query import Principal, RetrievalResult, Retriever
from cairn.query.answers import result_json
from cairn.schemas.config import CairnConfig
from cairn.serve.auth import Caller
from cairn.serve.errors import REASON_CHARS, Unavailable, one_line
from cairn.serve.service import Question, Service

__all__ = ["MAX_K", "REASON_CHARS", "SEARCH_TOOL", "Search", "answer", "parse", "refusal", "render", "search"]

log = logging.getLogger("cairn.serve.mcp")

TOOL = "search"
MAX_K = 50  # the schema's bound when no service gives one ([serve] max_k's default; `cairn mcp --k` is held to it)
STDIO_CALLER = "mcp-stdio"  # the name `cairn mcp`'s one caller has in its logs


def properties(max_k: int = MAX_K, max_query_chars: int | None = None) -> dict[str, dict[str, Any]]:
    """The tool's arguments, with the service's bounds (`[serve] max_k`, `max_query_chars`) in the schema."""
    query: dict[str, Any] = {
        "type": "string",
        "description": "The question, in words (e.g. 'how do I promote the ledger replica').",
    }
    if max_query_chars is not None:
        query["maxLength"] = max_query_chars
    return {
        "query": query,
        "k": {
            "type": "integer",
            "minimum": 1,
            "maximum": max_k,
            "description": "How many sections to return (default: the server's).",
        },
        "doc_tag": {"type": "string", "description": "Only sections of this document family (e.g. one contract)."},
        "as_of": {
            "type": "string",
            "description": "An ISO date (YYYY-MM-DD) or date-time: answer with what was valid then, history included.",
        },
    }


PROPERTIES = properties()


def search_tool(max_k: int = MAX_K, max_query_chars: int | None = None) -> types.Tool:
    """The `search` tool as a client lists it, its bounds the ones every call is held to."""
    return types.Tool(
        name=TOOL,
        title="Search the knowledge base",
        description=(
            "Search the organisation's knowledge (runbooks, documents, incidents) that this server's user may read. "
            "Returns the most relevant sections, each headed by its citation (title, version, date, link), with a "
            "confidence tier (HIGH, MEDIUM, LOW, SPECULATIVE) and the words of the question no section contains. "
            "Cite the sections you use; say so when the confidence is LOW or SPECULATIVE."
        ),
        input_schema={
            "type": "object",
            "properties": properties(max_k, max_query_chars),
            "required": ["query"],
            "additionalProperties": False,
        },
        annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )


SEARCH_TOOL = search_tool()


@dataclass(frozen=True)
class Search:
    """One call's arguments, checked."""

    query: str
    k: int | None = None
    doc_tag: str | None = None
    as_of: str | None = None


def parse(arguments: dict[str, Any] | None, max_k: int = MAX_K, max_query_chars: int | None = None) -> Search:
    """A call's arguments -> Search; UsageError with a one-line reason the model can act on. `as_of` is parsed
    by the retriever, whose FilterError (a UsageError) says what is wrong with it."""
    given = dict(arguments or {})
    unknown = sorted(set(given) - set(PROPERTIES))
    if unknown:
        raise UsageError(
            f"unknown argument {shown(unknown[0])}: the tool takes {', '.join(PROPERTIES)} "
            "(who asks is set when the server starts, never by an argument)"
        )
    query, k = given.get("query"), given.get("k")
    if not isinstance(query, str) or not query.strip():
        raise UsageError(f"query: give the question as a non-empty string, got {shown(query)}")
    if max_query_chars is not None and len(query) > max_query_chars:
        raise UsageError(f"query: at most {max_query_chars} characters ([serve] max_query_chars), got {len(query)}")
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= max_k):
        raise UsageError(f"k: a whole number from 1 to {max_k}, got {shown(k)}")
    for name in ("doc_tag", "as_of"):
        if given.get(name) is not None and not isinstance(given[name], str):
            raise UsageError(f"{name}: a string, got {shown(given[name])}")
    return Search(query, k, given.get("doc_tag") or None, given.get("as_of") or None)


def shown(value: Any) -> str:
    """A caller's value as a reason quotes it: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def render(result: RetrievalResult) -> str:
    """The answer as a model reads it: the message when there is nothing to show (too vague, nothing relevant),
    the confidence and the gaps, then each packed block headed by `[n]` and its citations (adjacent sections of
    one document are one block with one citation each), in the order packing chose. Without blocks (packing
    off), each hit's citation and text."""
    lines = [result.message] if result.status != "ok" and result.message else []
    lines.append(f"confidence: {result.confidence} ({result.confidence_reason})")
    if result.gaps:
        lines.append(f"not found in any section: {', '.join(result.gaps)}")
    sections = [(b.citations, b.text) for b in result.blocks] or [([h.citation], h.text) for h in result.hits]
    for number, (citations, text) in enumerate(sections, 1):
        lines += ["", f"[{number}] " + "\n    ".join(citations), text.strip()]
    return "\n".join(lines)


def answer(result: RetrievalResult) -> types.CallToolResult:
    """The text for the model and, as structured content, what `cairn query --json` prints (answers.py)."""
    data = result_json(result)
    data.pop("diagnostics")
    return types.CallToolResult(content=[types.TextContent(text=render(result))], structured_content=data)


def refusal(reason: str) -> types.CallToolResult:
    """A tool error: one line, so that a client showing it and a model reading it see the same thing."""
    return types.CallToolResult(content=[types.TextContent(text=one_line(reason))], is_error=True)


async def search(
    service: Service, caller: Caller, arguments: dict[str, Any] | None, default_k: int | None = None
) -> types.CallToolResult:
    """One call of the tool, on any transport: its arguments checked against the service's limits, the question
    answered by the service core (its turn, deadline, metrics and feedback record, as /v1/retrieve's), every
    failure a tool error of one line. The structured content carries the `query_id` when the answer was recorded
    for feedback (POST /v1/feedback)."""
    limits = service.config.serve
    try:
        found = parse(arguments, limits.max_k, limits.max_query_chars)
        question = Question(found.query, found.k or default_k, found.doc_tag, found.as_of)
        query_id, result = await service.answer(question, caller)
    except (UsageError, Unavailable) as exc:  # a bad argument (a bad as_of included), a busy or failing index
        return refusal(str(exc))
    except Exception:  # a bug: its traceback in the log, and the server goes on answering
        service.metrics.error()
        log.exception("search failed")
        return refusal("internal error in the search tool (its traceback is in the server's log)")
    reply = answer(result)
    if reply.structured_content is not None and service.feedback is not None:
        reply.structured_content["query_id"] = query_id
    return reply


def build_server(service: Service, caller: Caller, default_k: int | None = None) -> Server[Any]:
    """The MCP server with its one tool (nothing else: no resources, no prompts), answering as `caller`."""
    tool = search_tool(service.config.serve.max_k, service.config.serve.max_query_chars)

    async def list_tools(_ctx: Any, _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name != TOOL:  # not the tool's error but the call's: a protocol error, as the spec says
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown tool {params.name!r}: this server has {TOOL!r}")
        # The pipeline runs on a thread of the service core: the connection keeps answering pings meanwhile.
        return await search(service, caller, params.arguments, default_k)

    return Server("cairn", version=cairn.__version__, on_list_tools=list_tools, on_call_tool=call_tool)


@contextmanager
def stdout_on_stderr() -> Iterator[None]:
    """fd 1 pointed at stderr for the block, for Python's writes and native code's alike."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def serve_stdio(config: CairnConfig, principal: Principal, k: int | None = None) -> None:
    """Open the Retriever, answer over stdin/stdout until the client closes stdin, close the Retriever.

    The Retriever opens before the transport starts: a config or index that cannot serve stops the command with
    its message and exit code before any protocol (inside the transport, its stdin reader would hold the process
    until the client wrote again). Every call then goes through the service core as the HTTP service's do (the
    `[serve]` limits, the per-question `timeout_seconds`, the error mapping, the metrics); nothing is recorded
    for feedback, which only the HTTP service takes."""
    if k is not None and k > config.serve.max_k:
        raise UsageError(f"--k {k} is over [serve] max_k = {config.serve.max_k}")
    with stdout_on_stderr():
        retriever = Retriever.from_config(config)
    service = Service(config, retriever=retriever, feedback=False)
    caller = Caller(STDIO_CALLER, principal, 0)
    try:
        anyio.run(_serve, build_server(service, caller, k))
    finally:
        service.close()


async def _serve(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
