"""The records, enums, collection schema and configuration every Cairn layer shares."""
from schemas.records import (
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
    "TEMPORAL_OPEN", "Chunk", "ChunkType", "ContentType", "DocumentRef", "Environment", "Principal",
    "QualityFlags", "Section", "Severity", "SourceDocument", "SourceType", "from_epoch", "stable_id", "to_epoch",
]
