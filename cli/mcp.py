"""`cairn mcp`: the query module as an MCP server on stdio (serve/mcp.py), for the MCP client that launches it;
one tool, `search`, answering as the principal named here (docs/service.md, "MCP (stdio)").

stdout carries the protocol and nothing else: this command prints nothing there, and Cairn's logs (`--verbose`
adds each search's telemetry) go to stderr. It runs until the client closes its stdin.
"""

from __future__ import annotations

from typing import Annotated

import typer

from cairn.cli.exits import Outcome
from cairn.cli.options import CallerGroupOption, CallerTenantOption, ConfigOption, load, principal
from cairn.errors import CairnError


def mcp(
    ctx: typer.Context,
    config: ConfigOption = None,
    tenant: CallerTenantOption = None,  # every search runs as this one caller
    group: CallerGroupOption = None,
    k: Annotated[
        int | None,
        # max: serve/mcp.py MAX_K (tests/unit/test_cli_mcp.py holds the two together)
        typer.Option("--k", help="sections a search returns when it does not say (default: [query] k)", min=1, max=50),
    ] = None,
) -> Outcome:
    """Serve `search` to an MCP client over stdio, as one principal (tenant + groups)."""
    caller = principal(tenant or "", group or ())  # refused before anything is opened
    try:
        from cairn.serve.mcp import serve_stdio
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != "mcp":
            raise
        raise CairnError(
            'cairn mcp needs the MCP SDK, which the `serve` extra brings: pip install "cairn[serve]"'
        ) from None
    serve_stdio(load(ctx, config), caller, k)
    return Outcome.OK
