"""Cairn's retrieval side: what downstream services import (with schemas, nothing else of Cairn)."""
from query.retriever import Hit, RetrievalError, RetrievalResult, Retriever
from schemas import Principal

__all__ = ["Hit", "Principal", "RetrievalError", "RetrievalResult", "Retriever"]
