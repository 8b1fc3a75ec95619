"""The records, enums, collection schema and configuration every Cairn layer shares."""

if not __name__.startswith("cairn."):  # the folder is mapped into the cairn namespace (pyproject.toml)
    raise ImportError(f"import cairn.{__name__}, not {__name__}: Cairn installs one top-level package")
# What the package offers, each name once (`X as X`: an explicit re-export, instead of an import and __all__).
from cairn.schemas.records import TEMPORAL_OPEN as TEMPORAL_OPEN
from cairn.schemas.records import Chunk as Chunk
from cairn.schemas.records import ChunkType as ChunkType
from cairn.schemas.records import ContentType as ContentType
from cairn.schemas.records import DocumentRef as DocumentRef
from cairn.schemas.records import Environment as Environment
from cairn.schemas.records import Principal as Principal
from cairn.schemas.records import QualityFlags as QualityFlags
from cairn.schemas.records import Section as Section
from cairn.schemas.records import Severity as Severity
from cairn.schemas.records import SourceDocument as SourceDocument
from cairn.schemas.records import SourceType as SourceType
from cairn.schemas.records import from_epoch as from_epoch
from cairn.schemas.records import stable_id as stable_id
from cairn.schemas.records import to_epoch as to_epoch
