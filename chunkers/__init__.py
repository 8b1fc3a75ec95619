"""Chunkers: a SourceDocument -> parent sections, each with an abstract and child chunks. Pure, no I/O.

Every layout turns its document into units (units.py) and hands them to the one shared packer
(sections.py), so sizing, ids, abstracts and health behave the same whatever the source.

    from cairn.chunkers import chunk_document
    sections = chunk_document(document, ChunkingConfig())

An empty result means the document had no text to index; the caller reports it as a failure.
"""

from __future__ import annotations

if not __name__.startswith("cairn."):  # the folder is mapped into the cairn namespace (pyproject.toml)
    raise ImportError(f"import cairn.{__name__}, not {__name__}: Cairn installs one top-level package")

from collections.abc import Callable

from cairn.chunkers.code import code_units, terraform_units, yaml_units
from cairn.chunkers.legal import legal_units
from cairn.chunkers.markdown import markdown_units
from cairn.chunkers.sections import pack_sections
from cairn.chunkers.units import Unit
from cairn.schemas.config import ChunkingConfig
from cairn.schemas.records import ContentType, Section, SourceDocument

LayoutChunker = Callable[[str, ChunkingConfig], list[Unit]]

# Every content type not named here is Markdown (incidents are rendered to Markdown by their source).
_LAYOUTS: dict[ContentType, LayoutChunker] = {
    **{content_type: markdown_units for content_type in ContentType},
    ContentType.TERRAFORM: terraform_units,
    ContentType.YAML: yaml_units,
    ContentType.CODE: code_units,
    ContentType.AGREEMENT: legal_units,
}


def chunk_document(doc: SourceDocument, config: ChunkingConfig) -> list[Section]:
    """The document's parent sections in order; [] when its body holds no text."""
    units = _LAYOUTS[doc.content_type](doc.content, config)
    return pack_sections(units, doc.title, config)


__all__ = ["chunk_document", "Unit", "markdown_units", "pack_sections"]
