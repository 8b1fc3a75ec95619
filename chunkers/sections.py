"""Units -> parent sections: the shared packer every layout ends in.

Sections are what generation reads, so they should be whole heading sections of 400-900 tokens. Real
documents rarely oblige: small sibling sections are merged, large ones split between blocks. The
segmentation (packing.plan_segments) prices those choices so that, in order of weight:
  1. a section lands inside [parent_min_tokens, parent_max_tokens] wherever the text allows;
  2. it starts at a heading rather than mid-section (a split), at a shallower heading if possible;
  3. its size is near parent_target_tokens, and sibling sections already in the band stay apart.
A heading never ends a section: it belongs with the text it introduces.

Ids are slug paths of the heading path ("restart-auth-gateway.diagnosis"), "-2" for a repeated
heading, ".part-N" for the N-th piece of a split section, "root" for text before any heading:
the same document always yields the same ids, so re-indexing rewrites the same rows.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from cairn.chunkers.abstracts import document_idf, extractive_abstract
from cairn.chunkers.children import split_children
from cairn.chunkers.health import chunk_health_score
from cairn.chunkers.segmentation import Band, plan_segments
from cairn.chunkers.tokens import count_tokens
from cairn.chunkers.units import UNIT_JOINER, Unit, glued_to_next
from cairn.schemas.anchors import Anchors
from cairn.schemas.config import ChunkingConfig
from cairn.schemas.records import QualityFlags, Section
from cairn.schemas.row_links import PageRange

ROOT_ID = "root"
_SLUG_CHARS = 48  # per heading, so that six levels stay well inside the 512-byte section_id field

# Price of cutting before a heading of each level (index = level; 1-2 are the natural section
# boundaries of a runbook), and of cutting anywhere else, which splits a section.
_HEADING_CUT = (0.0, 0.0, 0.0, 0.3, 0.6, 1.0, 1.0)
_MID_SECTION_CUT = 4.0
# Price of *not* cutting before a heading, i.e. of merging its section into the previous one: small
# for a section too small to stand alone, large for one that already fills a section by itself
# (with its subsections), so that two in-band siblings stay apart instead of fusing nearer the target.
_HEADING_KEEP = (0.0, 0.1, 0.1, 0.05, 0.02, 0.02, 0.02)
_SELF_SUFFICIENT_KEEP = 1.0


class _IdRegistry:
    """Hands out ids unique within a document: repeats of "x" become "x-2", "x-3"... in order."""

    def __init__(self) -> None:
        self._used: set[str] = set()
        self._last_suffix: dict[str, int] = {}  # so ten thousand "Step" headings cost O(n), not O(n^2)

    def claim(self, candidate: str) -> str:
        chosen, n = candidate, self._last_suffix.get(candidate, 1)
        if n > 1:
            chosen = f"{candidate}-{n}"
        while chosen in self._used:
            n += 1
            chosen = f"{candidate}-{n}"
        self._last_suffix[candidate] = n
        self._used.add(chosen)
        return chosen


@dataclass(frozen=True)
class _Outline:
    """The heading sections of a document: which one each unit belongs to, and their tree."""

    owner: list[int]  # owner[i]: heading section of unit i (0 = text before any heading)
    first_unit: list[int]  # first_unit[k]: index of section k's heading unit (0 for the root)
    parent: list[int | None]  # parent[k]: enclosing heading section, None at the top level
    ids: list[str]  # ids[k]: the stable slug path of section k


def pack_sections(units: Sequence[Unit], doc_title: str, config: ChunkingConfig) -> list[Section]:
    """Segment a document's units into parent sections with ids, abstracts, children and health."""
    if not units:
        return []
    spans = _segment(units, config)
    registry = _IdRegistry()
    outline = _outline(units, registry)
    pieces_of: dict[int, list[int]] = {}  # heading section -> the segments holding its units
    for order, (start, end) in enumerate(spans):
        for k in dict.fromkeys(outline.owner[start:end]):
            pieces_of.setdefault(k, []).append(order)
    ids = _segment_ids(spans, outline, pieces_of, registry)
    texts = [UNIT_JOINER.join(unit.text for unit in units[start:end]) for start, end in spans]
    anchors = heading_anchors(units)
    idf = document_idf(texts)
    starts = [start for start, _ in spans]
    sections = []
    for order, (start, end) in enumerate(spans):
        first = units[start]
        breadcrumbs = list(first.heading_path) or [doc_title]
        k = outline.owner[start]
        anchor = _parent_anchor(start, k, outline)
        parent_order = bisect.bisect_right(starts, anchor) - 1 if anchor is not None else order
        abstract = extractive_abstract(breadcrumbs, texts[order], config, idf)
        chunks = split_children(units[start:end], config)
        flags = QualityFlags(
            merge_count=len(set(outline.owner[start:end])) - 1,
            split_count=len(pieces_of[k]) if len(pieces_of[k]) > 1 else 0,
        )
        section = Section(
            section_id=ids[order],
            breadcrumbs=breadcrumbs,
            section_level=len(first.heading_path),
            section_order=order,
            parent_section_id=ids[parent_order] if parent_order != order else "",
            text=texts[order],
            token_count=count_tokens(texts[order]),
            abstract=abstract,
            abstract_token_count=count_tokens(abstract),
            chunks=chunks,
            quality_flags=flags,
            extra={**_page_range(units[start:end]), **({"anchor": anchors[start]} if anchors[start] else {})},
        )
        flags.chunk_health_score = chunk_health_score(section, config)
        sections.append(section)
    return sections


def heading_anchors(units: Sequence[Unit]) -> list[str]:
    """For each unit, the rendered anchor (chunkers/anchors.py) of the heading it sits under, "" before any:
    where a deep link to a section starting there lands."""
    page = Anchors()
    current, found = "", []
    for unit in units:
        if unit.is_heading and unit.heading_path:
            current = page.claim(unit.heading_path[-1])
        found.append(current)
    return found


def _page_range(units: Sequence[Unit]) -> dict[str, Any]:
    """What a section's rows record of the pages it spans (schemas/row_links.py PageRange)."""
    pages = [unit.pages for unit in units if unit.pages]
    if not pages:
        return {}
    return PageRange(min(p[0] for p in pages), max(p[1] for p in pages)).to_row()


def _segment(units: Sequence[Unit], config: ChunkingConfig) -> list[tuple[int, int]]:
    subtree = _subtree_tokens(units)
    cut_costs, keep_costs = [], []
    for unit, size in zip(units, subtree):
        depth = min(unit.level, len(_HEADING_CUT) - 1)
        if unit.section_start:
            cut_costs.append(_HEADING_CUT[depth])
            self_sufficient = size >= config.parent_min_tokens
            keep_costs.append(_HEADING_KEEP[depth] + (_SELF_SUFFICIENT_KEEP if self_sufficient else 0.0))
        else:
            cut_costs.append(_MID_SECTION_CUT)
            keep_costs.append(0.0)
    band = Band(config.parent_min_tokens, config.parent_target_tokens, config.parent_max_tokens)
    return plan_segments([u.tokens for u in units], band, cut_costs, keep_costs, glued_to_next(units))


def _subtree_tokens(units: Sequence[Unit]) -> list[int]:
    """For each heading unit, the tokens of its whole section, subsections included (0 elsewhere)."""
    reach = [0, *accumulate(unit.tokens for unit in units)]  # reach[i]: the tokens of the units before i
    sizes = [0] * len(units)
    open_sections: list[int] = []  # heading units whose section has not ended yet
    for i, unit in enumerate([*units, None]):  # a sentinel closes every section at the end
        if unit is None or unit.section_start:
            while open_sections and (unit is None or units[open_sections[-1]].level >= unit.level):
                start = open_sections.pop()
                sizes[start] = reach[i] - reach[start]
            if unit is not None:
                open_sections.append(i)
    return sizes


def _outline(units: Sequence[Unit], registry: _IdRegistry) -> _Outline:
    owner: list[int] = []
    first_unit = [0]
    parent: list[int | None] = [None]
    ids = [ROOT_ID]
    if not units[0].section_start:
        registry.claim(ROOT_ID)
    latest: dict[tuple[str, ...], int] = {}  # heading path -> the latest section with that path
    for i, unit in enumerate(units):
        if unit.section_start:
            k = len(first_unit)
            up = latest.get(unit.heading_path[:-1]) if unit.heading_path[:-1] else None
            title = unit.heading_path[-1] if unit.heading_path else ""
            # a path whose ancestors open no section of their own (a Terraform "resource" > name) keeps
            # them in its id, so `variable.region` and `output.region` stay apart
            base = (
                f"{ids[up]}.{slug(title)}" if up is not None else ".".join(map(slug, unit.heading_path)) or slug(title)
            )
            first_unit.append(i)
            parent.append(up)
            ids.append(registry.claim(base))
            latest[unit.heading_path] = k
        owner.append(len(first_unit) - 1)
    return _Outline(owner, first_unit, parent, ids)


def _segment_ids(
    spans: list[tuple[int, int]], outline: _Outline, pieces_of: dict[int, list[int]], registry: _IdRegistry
) -> list[str]:
    """A segment opening its heading section takes that section's id; a continuation adds .part-N."""
    ids = []
    for order, (start, _) in enumerate(spans):
        k = outline.owner[start]
        if start == outline.first_unit[k]:
            ids.append(outline.ids[k])
        else:
            part = pieces_of[k].index(order) + 1
            ids.append(registry.claim(f"{outline.ids[k]}.part-{part}"))
    return ids


def _parent_anchor(start: int, k: int, outline: _Outline) -> int | None:
    """The unit whose segment is this segment's parent.

    A segment opening section k hangs under the segment holding k's parent heading; a continuation
    (part-N) hangs under the segment holding k's own heading, where its context begins.
    """
    if start != outline.first_unit[k]:
        return outline.first_unit[k]
    up = outline.parent[k]
    return outline.first_unit[up] if up is not None else None


def slug(title: str) -> str:
    """Lowercase ASCII letters, digits and hyphens; accents folded; "section" if nothing is left."""
    ascii_text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    return text[:_SLUG_CHARS].rstrip("-") or "section"
