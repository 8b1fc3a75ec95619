"""The MCP `search` tool on the HTTP service itself (`POST /mcp`, the SDK's streamable-HTTP transport), behind the
same bearer keys as /v1: a shared service for agents, where `cairn mcp` (stdio) is one person's own. A call is
answered by serve/mcp.py's `search`, as `cairn mcp`'s are: the `[serve]` limits, the deadline and the errors
are the service core's.

Each call runs as the principal of the key that made it (serve/app.py's KeyCheck authenticates /mcp before the SDK
sees the request) and goes through the service like /v1/retrieve: the turn, the deadline, the metrics, the
feedback record (its `query_id` is in the structured content, for POST /v1/feedback). Stateless and answered as
JSON (no session to keep on one worker, so `--workers N` needs nothing more); DNS-rebinding protection is off
because every request needs a key, which a rebinding page does not have.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from mcp import types
from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError

import cairn
from cairn.serve.auth import Caller
from cairn.serve.mcp import TOOL, search, search_tool
from cairn.serve.service import Service


def caller_of(ctx: Any) -> Caller:
    """The caller KeyCheck put in the HTTP request's state (a protocol error when there is none)."""
    request = getattr(ctx, "request", None)
    state = getattr(request, "scope", {}).get("state") or {}
    found = state.get("caller")
    if not isinstance(found, Caller):
        raise MCPError(code=types.INVALID_REQUEST, message="no authenticated caller: send a bearer key")
    return found


def tool_server(service: Service) -> Server[Any]:
    limits = service.config.serve
    tool = search_tool(limits.max_k, limits.max_query_chars)

    async def list_tools(_ctx: Any, _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name != TOOL:
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown tool {params.name!r}: this server has {TOOL!r}")
        return await search(service, caller_of(ctx), params.arguments)

    return Server("cairn", version=cairn.__version__, on_list_tools=list_tools, on_call_tool=call_tool)


def mcp_endpoint(service: Service) -> tuple[StreamableHTTPASGIApp, Callable[[], AbstractAsyncContextManager[Any]]]:
    """The ASGI app to route /mcp to, and the context the app's lifespan must hold while it serves."""
    manager = StreamableHTTPSessionManager(
        app=tool_server(service),
        stateless=True,
        json_response=True,
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    return StreamableHTTPASGIApp(manager), manager.run
