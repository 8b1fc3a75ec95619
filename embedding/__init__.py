"""The embedding model, shared by ingestion (index/) and retrieval (query/)."""

if not __name__.startswith("cairn."):  # the folder is mapped into the cairn namespace (pyproject.toml)
    raise ImportError(f"import cairn.{__name__}, not {__name__}: Cairn installs one top-level package")
from cairn.embedding.encoder import Encoder
from cairn.embedding.model import (
    BACKENDS,
    ModelEncoder,
    encoder_for,
    encoder_for_identity,
    load_encoder,
    query_encoder_for,
)

__all__ = [
    "BACKENDS",
    "Encoder",
    "ModelEncoder",
    "encoder_for",
    "encoder_for_identity",
    "load_encoder",
    "query_encoder_for",
]
