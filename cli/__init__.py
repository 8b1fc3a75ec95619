"""The `cairn` command line: the top layer, above the flows and the query module."""

if not __name__.startswith("cairn."):  # the folder is mapped into the cairn namespace (pyproject.toml)
    raise ImportError(f"import cairn.{__name__}, not {__name__}: Cairn installs one top-level package")
from cairn.cli.app import main

__all__ = ["main"]
