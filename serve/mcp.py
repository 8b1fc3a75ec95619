"""`cairn mcp`: the query module as one MCP tool, `search`, served over stdio to the MCP client that launches it
(an IDE, a chat application, an agent). docs/service.md, "MCP (stdio)".

Who asks is fixed when the server starts (`--tenant`, `--group`): the tool's arguments narrow the question, never
the caller, so a model cannot read past the access of the person who configured the client. An argument the
tool does not take (`tenant`, say) is refused, not ignored.

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
from threading import Lock
from typing import Any

import anyio
import anyio.to_thread
from mcp import types
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from pymilvus.exceptions import MilvusException

import cairn
from cairn.errors import StoreError, UsageError
from cairn.query import Principal, RetrievalResult, Retriever
from cairn.query.answers import result_json
from cairn.redact import redact
from cairn.schemas.config import CairnConfig

log = logging.getLogger("cairn.serve.mcp")

TOOL = "search"
MAX_K = 50  # sections one call may ask for (`cairn mcp --k` is held to the same bound)
REASON_CHARS = 300  # a tool error's reason is one line, at most this long

PROPERTIES: dict[str, dict[str, Any]] = {
    "query": {"type": "string", "description": "The question, in words (e.g. 'how do I promote the ledger replica')."},
    "k": {
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_K,
        "description": "How many sections to return (default: the server's).",
    },
    "doc_tag": {"type": "string", "description": "Only sections of this document family (e.g. one contract)."},
    "as_of": {
        "type": "string",
        "description": "An ISO date (YYYY-MM-DD) or date-time: answer with what was valid then, history included.",
    },
}
SEARCH_TOOL = types.Tool(
    name=TOOL,
    title="Search the knowledge base",
    description=(
        "Search the organisation's knowledge (runbooks, documents, incidents) that this server's user may read. "
        "Returns the most relevant sections, each headed by its citation (title, version, date, link), with a "
        "confidence tier (HIGH, MEDIUM, LOW, SPECULATIVE) and the words of the question no section contains. "
        "Cite the sections you use; say so when the confidence is LOW or SPECULATIVE."
    ),
    input_schema={"type": "object", "properties": PROPERTIES, "required": ["query"], "additionalProperties": False},
    annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
)


@dataclass(frozen=True)
class Search:
    """One call's arguments, checked."""

    query: str
    k: int | None = None
    doc_tag: str | None = None
    as_of: str | None = None


def parse(arguments: dict[str, Any] | None) -> Search:
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
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K):
        raise UsageError(f"k: a whole number from 1 to {MAX_K}, got {shown(k)}")
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
    line = " ".join(reason.split())
    return types.CallToolResult(content=[types.TextContent(text=line[:REASON_CHARS])], is_error=True)


class SearchTool:
    """The `search` tool over one Retriever, as one principal."""

    def __init__(self, retriever: Retriever, principal: Principal, k: int | None = None) -> None:
        self.retriever = retriever
        self.principal = principal
        self.k = k  # None: [query] k
        self._turn = Lock()  # a Retriever answers one question at a time (one Milvus client, one encoder)

    def call(self, arguments: dict[str, Any] | None) -> types.CallToolResult:
        """One call, start to end (blocking: run on a worker thread). Every failure is a tool error."""
        try:
            search = parse(arguments)
            with self._turn:
                result = self.retriever.retrieve(
                    search.query, self.principal, k=search.k or self.k, doc_tag=search.doc_tag, as_of=search.as_of
                )
        except UsageError as exc:  # FilterError included: a bad as_of
            return refusal(str(exc))
        except (StoreError, MilvusException) as exc:  # the Retriever already retried once on a fresh client
            log.warning("search: index unavailable: %s", redact(str(exc)))
            return refusal(f"index unavailable: {redact(str(exc))}")
        except Exception:  # a bug: its traceback on stderr, and the server goes on answering
            log.exception("search failed")
            return refusal("internal error in the search tool (its traceback is in the server's log)")
        return answer(result)


def build_server(tool: SearchTool) -> Server[Any]:
    """The MCP server with its one tool (nothing else: no resources, no prompts)."""

    async def list_tools(_ctx: Any, _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[SEARCH_TOOL])

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name != TOOL:  # not the tool's error but the call's: a protocol error, as the spec says
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown tool {params.name!r}: this server has {TOOL!r}")
        # The pipeline blocks (the encoder, the index): on a worker thread, so the connection keeps answering pings.
        return await anyio.to_thread.run_sync(tool.call, params.arguments)

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
    until the client wrote again)."""
    with stdout_on_stderr():
        retriever = Retriever.from_config(config)
    try:
        anyio.run(_serve, build_server(SearchTool(retriever, principal, k)))
    finally:
        retriever.close()


async def _serve(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
