"""The records, enums, collection schema and configuration every Cairn layer shares."""

if not __name__.startswith("cairn."):  # the folder is mapped into the cairn namespace (pyproject.toml)
    raise ImportError(f"import cairn.{__name__}, not {__name__}: Cairn installs one top-level package")
from cairn.schemas.records import (
    TEMPORAL_OPEN,
    Chunk,
    ChunkType,
    ContentType,
    DocumentRef,
    Environment,
    Principal,
    QualityFlags,
    Section,
    Severity,
    SourceDocument,
    SourceType,
    from_epoch,
    stable_id,
    to_epoch,
)

__all__ = [
    "TEMPORAL_OPEN",
    "Chunk",
    "ChunkType",
    "ContentType",
    "DocumentRef",
    "Environment",
    "Principal",
    "QualityFlags",
    "Section",
    "Severity",
    "SourceDocument",
    "SourceType",
    "from_epoch",
    "stable_id",
    "to_epoch",
]
