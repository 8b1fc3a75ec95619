"""`cairn serve`: the query module as an HTTP service (and an MCP tool) for services in any language.

Installed by the `serve` extra (`pip install "cairn[serve]"`); imports only the query side, never the ingestion
stack.
"""

if not __name__.startswith("cairn."):  # the folder is mapped into the cairn namespace (pyproject.toml)
    raise ImportError(f"import cairn.{__name__}, not {__name__}: Cairn installs one top-level package")
