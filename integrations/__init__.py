"""Adapters that hand Cairn's retrieval to other frameworks: `cairn.integrations.langchain` (the `langchain`
extra) and `cairn.integrations.llamaindex` (the `llamaindex` extra). Each imports only the query side."""

if not __name__.startswith("cairn."):  # the folder is mapped into the cairn namespace (pyproject.toml)
    raise ImportError(f"import cairn.{__name__}, not {__name__}: Cairn installs one top-level package")
