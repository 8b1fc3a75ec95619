"""Cairn's retrieval side: what downstream services import (with schemas, nothing else of Cairn)."""
from query.filters import FILTER_FIELDS, FilterError
from query.retriever import RetrievalError, Retriever
from query.types import Block, Hit, RetrievalResult
from schemas import Principal

__all__ = ["FILTER_FIELDS", "Block", "FilterError", "Hit", "Principal", "RetrievalError", "RetrievalResult", "Retriever"]
