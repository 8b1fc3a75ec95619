"""Cairn's retrieval side: what downstream services import (with schemas, nothing else of Cairn)."""

if not __name__.startswith("cairn."):  # the folder is mapped into the cairn namespace (pyproject.toml)
    raise ImportError(f"import cairn.{__name__}, not {__name__}: Cairn installs one top-level package")
from cairn.errors import FilterError, RetrievalError
from cairn.query.filters import FILTER_FIELDS
from cairn.query.retriever import Retriever
from cairn.query.types import Block, Hit, RetrievalResult
from cairn.schemas import Principal

__all__ = [
    "FILTER_FIELDS",
    "Block",
    "FilterError",
    "Hit",
    "Principal",
    "RetrievalError",
    "RetrievalResult",
    "Retriever",
]
