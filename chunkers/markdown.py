"""Markdown layout: a body (front matter already removed) -> units, one per top-level block.

markdown-it-py finds the blocks; each block's text is cut from the source by its line map rather than
re-rendered, so fences, tables and lists keep their exact Markdown. Headings maintain the heading
path. A block larger than the section band's width (units.piece_budget) is pre-split at the safest
boundary its kind offers (sentences, list items, quoted paragraphs), so that the packer can still
land every section in the band; code fences and tables stay whole up to `hard_block_tokens`,
because half a command or half a table misleads more than an oversized section does.

Invariant: only blank lines are dropped. Lines no block claims (link reference definitions) become
"other" units; every other non-blank line lands in exactly one unit. Two exceptions keep pieces
valid and sentences whole: a fence or table cut above the hard limit repeats its fence or header
lines, and a paragraph cut between sentences may divide a line between two units.
"""

from __future__ import annotations

from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

from cairn.chunkers.blocks import group_balanced, line_pieces, sentence_pieces
from cairn.chunkers.tokens import count_tokens
from cairn.chunkers.units import Unit, UnitKind, piece_budget
from cairn.schemas.config import ChunkingConfig

_KINDS: dict[str, UnitKind] = {
    "heading": "heading",
    "paragraph": "paragraph",
    "bullet_list": "list",
    "ordered_list": "list",
    "fence": "code",
    "code_block": "code",
    "table": "table",
    "blockquote": "quote",
    "html_block": "html",
}
_UNBREAKABLE = ("code", "table")


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


def markdown_units(text: str, config: ChunkingConfig) -> list[Unit]:
    """The units of a Markdown body, in document order; [] for a blank body."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    tree = SyntaxTreeNode(_parser().parse("\n".join(lines)))
    headings: list[tuple[int, str]] = []  # the open heading stack: (level, title), outermost first
    units: list[Unit] = []
    covered = 0
    for node in tree.children:
        if node.map is None:
            continue
        start, end = node.map
        # lines no block claims (link reference definitions) are kept, not lost
        units += _units(_pieces(None, covered, start, lines, "other", config), "other", headings)
        if node.type == "heading":
            level = int(node.tag[1:])
            while headings and headings[-1][0] >= level:
                headings.pop()
            headings.append((level, heading_title(node)))
            units.append(_unit(_slice(lines, start, end), "heading", headings, section_start=True))
        else:
            kind = _KINDS.get(node.type, "other")
            units += _units(_pieces(node, start, end, lines, kind, config), kind, headings)
        covered = max(covered, end)
    units += _units(_pieces(None, covered, len(lines), lines, "other", config), "other", headings)
    return units


def heading_title(node: SyntaxTreeNode) -> str:
    """A heading's plain text: code spans, links and emphasis reduced to their words."""
    inline = node.children[0].token if node.children else None
    parts = []
    for token in (inline.children or []) if inline else []:
        if token.type in ("text", "code_inline", "image"):
            parts.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return " ".join("".join(parts).split()) or "(untitled)"


def _unit(text: str, kind: UnitKind, headings: list[tuple[int, str]], section_start: bool = False) -> Unit:
    return Unit(
        text=text,
        tokens=count_tokens(text),
        kind=kind,
        heading_path=tuple(title for _, title in headings),
        level=headings[-1][0] if headings else 0,
        section_start=section_start,
    )


def _units(pieces: list[str], kind: UnitKind, headings: list[tuple[int, str]]) -> list[Unit]:
    return [_unit(piece, kind, headings) for piece in pieces if piece.strip()]


def _slice(lines: list[str], start: int, end: int) -> str:
    """Source lines [start, end) without leading or trailing blank lines (indentation kept)."""
    chunk = lines[start:end]
    while chunk and not chunk[-1].strip():
        chunk.pop()
    while chunk and not chunk[0].strip():
        chunk.pop(0)
    return "\n".join(chunk)


def _pieces(
    node: SyntaxTreeNode | None, start: int, end: int, lines: list[str], kind: UnitKind, config: ChunkingConfig
) -> list[str]:
    """Source lines [start, end) of one block (`node`, None for unclaimed lines), pre-split into
    pieces of at most piece_budget tokens if larger, at the safest boundary the block offers."""
    text = _slice(lines, start, end)
    tokens = count_tokens(text)
    budget = piece_budget(config)
    own_kind = _KINDS.get(node.type, "other") if node is not None else kind  # a fence inside a list is code
    if own_kind in _UNBREAKABLE:
        return [text] if tokens <= config.hard_block_tokens else line_pieces(text, own_kind, budget)
    if tokens <= budget:
        return [text]
    if own_kind == "paragraph":
        return sentence_pieces(text, budget)
    if node is not None and node.type in ("bullet_list", "ordered_list", "list_item", "blockquote"):
        children = [child for child in node.children if child.map is not None]
        if children:
            return _grouped(children, start, end, lines, kind, config)
    return _line_groups(text, budget)


def _grouped(
    children: list[SyntaxTreeNode], start: int, end: int, lines: list[str], kind: UnitKind, config: ChunkingConfig
) -> list[str]:
    """A container's children (list items, quoted paragraphs) grouped into pieces near the budget.

    Each child owns the lines from its start to the next child's start, so nothing between them is
    lost; a child still larger than a piece is split recursively at its own children.
    """
    budget = piece_budget(config)
    bounds = [start] + [child.map[0] for child in children[1:]] + [end]
    texts = [_slice(lines, bounds[i], bounds[i + 1]) for i in range(len(children))]
    sizes = [count_tokens(text) for text in texts]
    pieces = []
    for a, b in group_balanced(sizes, budget):
        if b - a == 1 and sizes[a] > budget:
            pieces += _pieces(children[a], bounds[a], bounds[a + 1], lines, kind, config)
        else:
            pieces.append(_slice(lines, bounds[a], bounds[b]))
    return pieces


def _line_groups(text: str, budget: int) -> list[str]:
    lines = text.split("\n")
    sizes = [count_tokens(line) + 1 for line in lines]
    return ["\n".join(lines[a:b]) for a, b in group_balanced(sizes, budget)]
