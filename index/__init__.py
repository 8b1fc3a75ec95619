"""Milvus storage: the collection as the ledger, row building, the embedding cache, locks and cursors."""

if not __name__.startswith("cairn."):  # the folder is mapped into the cairn namespace (pyproject.toml)
    raise ImportError(f"import cairn.{__name__}, not {__name__}: Cairn installs one top-level package")
