"""Connectors: each yields SourceDocuments with a stable document_id and a version_hash."""
from schemas.config import SourceConfig
from sources.base import DiscoveryFailure, DocumentError, Source, SourceError


def open_source(config: SourceConfig) -> Source:
    if config.type == "wiki":
        from sources.wiki import WikiSource

        return WikiSource(config)
    raise SourceError(f"source {config.name!r}: type {config.type!r} is not supported yet (supported: wiki)")


__all__ = ["DiscoveryFailure", "DocumentError", "Source", "SourceError", "open_source"]
