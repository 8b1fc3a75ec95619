"""A document's recipe: what turned its bytes into rows, besides the bytes themselves. Rows record its fingerprint
(schemas/row_links.py DocumentStamp.recipe) beside the access fingerprint; a document whose rows were made by
another recipe is re-chunked by the next run (index/plan.py), its texts embedded only where the embedding cache
lacks them.

The recipe is:
- the `[chunking]` settings (bands, hard block size);
- the source options that change a document's text or metadata (ROW_SHAPING: a PDF's parser and tags, a wiki's
  uri_base and default service, a git source's uri_template and service, PagerDuty's severity map);
- OUTPUT_VERSIONS: a number per source type's parser and one for the chunkers, bumped in code whenever their
  output for the same input changes (a release that segments differently). `tests/integration/test_recipe_golden.py`
  pins each to a digest of its output over a fixed sample, so a change of output without its bump fails there.

What needs a new collection (the encoder, the schema) is not part of it: that rebuilds beside
(index/generations.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from cairn.schemas.config import ChunkingConfig
from cairn.schemas.records import stable_id
from cairn.schemas.source_config import SourceBase

# Bump a number when the code it names gives other output for the same input (and update the golden digest).
OUTPUT_VERSIONS: dict[str, int] = {
    "chunkers": 2,  # chunkers/: sections, children, abstracts, health (2: a section records its heading's anchor)
    "wiki": 2,  # sources/wiki.py + sources/frontmatter.py: a page's text and metadata (2: lastmod and date read)
    "git": 1,  # sources/git.py
    "pagerduty": 1,  # sources/pagerduty/: an incident rendered to Markdown
    "pdf": 1,  # sources/pdf.py, sources/pdftext.py, sources/pdfparse.py
}

# The options of each source type that change what its documents' rows hold (text or metadata).
ROW_SHAPING: dict[str, tuple[str, ...]] = {
    "wiki": ("uri_base", "service", "link_template", "anchor_style"),
    "git": ("uri_template", "service"),
    "pagerduty": ("severity_map",),
    "pdf": ("parser", "tags"),
}


def recipe_parts(source_config: SourceBase, chunking: ChunkingConfig) -> dict[str, Any]:
    """The recipe of a source's documents, readable: what `recipe_fingerprint` hashes."""
    kind = str(getattr(source_config, "type", ""))
    options = source_config.model_dump(mode="json", include=set(ROW_SHAPING.get(kind, ())))
    return {
        "chunking": chunking.model_dump(mode="json"),
        "chunkers": OUTPUT_VERSIONS["chunkers"],
        "parser": {kind: OUTPUT_VERSIONS.get(kind, 0)},
        "source": options,
    }


def recipe_fingerprint(source_config: SourceBase, chunking: ChunkingConfig) -> str:
    """The fingerprint rows record (16 hex digits)."""
    return stable_id(json.dumps(recipe_parts(source_config, chunking), sort_keys=True), length=16)


def recipe_changes(before: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What differs between two recipes' parts, as short phrases ("[chunking] child_min_tokens 100 -> 60")."""
    out: list[str] = []
    for key, label in (("chunking", "[chunking]"), ("source", "source option"), ("parser", "parser version")):
        old, new = before.get(key) or {}, now.get(key) or {}
        for name in sorted(set(old) | set(new)):
            if old.get(name) != new.get(name):
                out.append(f"{label} {name} {old.get(name)!r} -> {new.get(name)!r}")
    if before.get("chunkers") != now.get("chunkers"):
        out.append(f"chunker version {before.get('chunkers')} -> {now.get('chunkers')}")
    return out


def configured_recipes(sources: Iterable[SourceBase], chunking: ChunkingConfig) -> dict[str, str]:
    """Each configured source's recipe fingerprint, by name."""
    return {source.name: recipe_fingerprint(source, chunking) for source in sources}
