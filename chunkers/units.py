"""The layout-neutral unit: one block of source text that a layout chunker hands to the shared packer.

Every layout (Markdown today; legal PDFs, incidents, Terraform later) reduces its document to a flat
sequence of units carrying their heading path. The packer (`sections.py`) and the child splitter
(`children.py`) only ever see units, so one implementation of sizing, ids and health serves every layout.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from cairn.schemas.config import ChunkingConfig

UNIT_JOINER = "\n\n"  # units of one section are joined by a blank line, as Markdown blocks are

UnitKind = Literal["heading", "paragraph", "list", "code", "table", "quote", "html", "other"]


@dataclass(frozen=True)
class Unit:
    text: str  # the exact source text of the block (or of one safe piece of an oversized block)
    tokens: int  # count_tokens(text)
    kind: UnitKind
    heading_path: tuple[str, ...]  # titles of the headings enclosing this block, outermost first
    level: int  # heading depth (1-6) of the enclosing section; 0 before any heading
    section_start: bool = False  # True for the heading unit that opens a section
    pages: tuple[int, int] | None = None  # first and last page it came from (paginated layouts: PDFs)
    term: str = ""  # a definition: the defined term; it becomes a child chunk of its own, tagged with it
    # a block that must be matched on its own (an agreement's opening statement: its name, parties and date),
    # so it becomes a child chunk of its own instead of a slice of the legends and recitals around it
    alone: bool = False

    @property
    def is_heading(self) -> bool:
        return self.kind == "heading"


def glued_to_next(units: Sequence[Unit]) -> list[bool]:
    """Which units must never end a segment: a heading sticks to what it introduces.

    A heading followed by a sibling or shallower heading introduces nothing (an empty section), so
    it is not glued; this keeps every glued chain strictly deepening, hence at most six units long,
    which is what lets the packer treat "a heading chain plus one block" as indivisible.
    """
    glued = []
    for i, unit in enumerate(units):
        nxt = units[i + 1] if i + 1 < len(units) else None
        glued.append(unit.is_heading and nxt is not None and (not nxt.is_heading or nxt.level > unit.level))
    return glued


def piece_budget(config: ChunkingConfig) -> int:
    """The size a layout cuts an oversized block down to before packing.

    Pieces no larger than the band's width (max - min) let the packer always close a segment inside
    the band; a piece is never made smaller than a child, the smallest text worth retrieving.
    """
    return max(config.parent_max_tokens - config.parent_min_tokens, config.child_max_tokens)
