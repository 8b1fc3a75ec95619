"""Connectors: each yields SourceDocuments with a stable document_id and a version_hash.

One entry per source type in _CONNECTORS ("module:Class"); a connector is a sources.base.Connector whose
constructor takes (SourceConfig, cursor: dict) and raises SourceError when the source cannot be used.
File-based connectors (listed in _READS_FILES, built on sources.blobsource) also take `s3=S3Config` for
sources at uri = "s3://bucket/prefix", and `memo=VersionMemo` (sources.base): the versions of folder files as
of their last read, so that a file whose stat did not move is not read again.
`document_id(source_type, source_name, locator)` names a document.
"""

if not __name__.startswith("cairn."):  # the folder is mapped into the cairn namespace (pyproject.toml)
    raise ImportError(f"import cairn.{__name__}, not {__name__}: Cairn installs one top-level package")
from importlib import import_module

# What the package offers besides open_source, each name once (`X as X`: an explicit re-export, not an import and
# __all__).
from cairn.schemas.config import S3Config
from cairn.schemas.source_config import SourceConfig
from cairn.sources.base import DiscoveryFailure as DiscoveryFailure
from cairn.sources.base import DocumentError as DocumentError
from cairn.sources.base import Source as Source
from cairn.sources.base import SourceError as SourceError
from cairn.sources.base import VersionMemo as VersionMemo
from cairn.sources.base import document_id as document_id
from cairn.sources.base import source_cursor as source_cursor
from cairn.sources.base import source_history as source_history
from cairn.sources.base import source_recent_history as source_recent_history

_CONNECTORS = {
    "wiki": "cairn.sources.wiki:WikiSource",
    "git": "cairn.sources.git:GitSource",
    "pagerduty": "cairn.sources.pagerduty:PagerDutySource",
    "pdf": "cairn.sources.pdf:PdfSource",
}
_READS_FILES = {"wiki", "pdf"}  # built on sources.blobsource: a folder or S3


def open_source(
    config: SourceConfig, cursor: dict | None = None, *, s3: S3Config | None = None, memo: VersionMemo | None = None
) -> Source:
    target = _CONNECTORS.get(config.type)
    if target is None:
        supported = ", ".join(sorted(_CONNECTORS))
        raise SourceError(f"source {config.name!r}: type {config.type!r} is not supported yet (supported: {supported})")
    module, _, cls = target.partition(":")
    extra = {"s3": s3, "memo": memo} if config.type in _READS_FILES else {}
    return getattr(import_module(module), cls)(config, dict(cursor or {}), **extra)
