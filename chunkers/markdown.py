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
from markdown_it.token import Token

from cairn.chunkers.blocks import group_balanced, line_pieces, sentence_pieces
from cairn.chunkers.tokens import LineTokens, count_tokens
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
    """Blocks only: what a block holds is cut from the source, never read from inline tokens, and parsing the
    inline content of every block (and building tree nodes for it) was a sixth of a big page's time."""
    return MarkdownIt("commonmark").enable("table").disable("inline")


@lru_cache(maxsize=1)
def _inline_parser() -> MarkdownIt:
    return MarkdownIt("commonmark")


def markdown_units(text: str, config: ChunkingConfig) -> list[Unit]:
    """The units of a Markdown body, in document order; [] for a blank body."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    env: dict = {}  # the link reference definitions the block parse finds, for the headings' inline parse
    tree = _Block.root(_parser().parse("\n".join(lines), env))
    counts = LineTokens(lines)  # every line tokenized once, whatever the nesting (tokens.py)
    headings: list[tuple[int, str]] = []  # the open heading stack: (level, title), outermost first
    units: list[Unit] = []
    covered = 0
    for node in tree.children:
        if node.map is None:
            continue
        start, end = node.map
        # lines no block claims (link reference definitions) are kept, not lost
        units += _units(_pieces(None, covered, start, counts, "other", config), "other", headings)
        if node.type == "heading":
            level = int(node.tag[1:])
            while headings and headings[-1][0] >= level:
                headings.pop()
            headings.append((level, heading_title(node, env)))
            heading = (_slice(lines, start, end), counts.of(start, end))
            units.append(_unit(heading, "heading", headings, section_start=True))
        else:
            kind = _KINDS.get(node.type, "other")
            units += _units(_pieces(node, start, end, counts, kind, config), kind, headings)
        covered = max(covered, end)
    units += _units(_pieces(None, covered, len(lines), counts, "other", config), "other", headings)
    return units


class _Block:
    """One block of markdown-it's token stream, as markdown_it.tree.SyntaxTreeNode shows it (type, tag, line map,
    children), read from the stream in place: the tree class copies every block's tokens once per level of
    nesting it sits in, a ninth of a big list's time."""

    __slots__ = ("_tokens", "_closing", "_at")

    def __init__(self, tokens: list[Token], closing: list[int], at: int) -> None:
        self._tokens, self._closing, self._at = tokens, closing, at  # closing[i]: where token i's block ends

    @classmethod
    def root(cls, tokens: list[Token]) -> _Block:
        """The document: its children are the top-level blocks."""
        stream = [Token("root_open", "", 1), *tokens, Token("root_close", "", -1)]
        closing, opened = list(range(len(stream))), []
        for i, token in enumerate(stream):
            if token.nesting == 1:
                opened.append(i)
            elif token.nesting == -1:
                closing[opened.pop()] = i
        return cls(stream, closing, 0)

    @property
    def type(self) -> str:
        kind = self._tokens[self._at].type
        return kind[: -len("_open")] if kind.endswith("_open") else kind

    @property
    def tag(self) -> str:
        return self._tokens[self._at].tag

    @property
    def map(self) -> list[int] | None:
        return self._tokens[self._at].map

    @property
    def first_line(self) -> int:
        lines = self.map
        assert lines is not None, "only blocks with a line map are cut at"
        return lines[0]

    @property
    def content(self) -> str:
        """The text of a heading or paragraph (its inline token's)."""
        inner = self._tokens[self._at + 1] if self._at + 1 < len(self._tokens) else None
        return inner.content if inner is not None and inner.type == "inline" else ""

    @property
    def children(self) -> list[_Block]:
        if self._tokens[self._at].nesting != 1:
            return []
        found, i = [], self._at + 1
        while i < self._closing[self._at]:
            found.append(_Block(self._tokens, self._closing, i))
            i = self._closing[i] + 1
        return found


def heading_title(node: _Block, env: dict | None = None) -> str:
    """A heading's plain text: code spans, links and emphasis reduced to their words (`env`: the document's link
    reference definitions, from its block parse)."""
    content = node.content
    parsed = _inline_parser().parseInline(content, dict(env or {})) if content else []
    parts = []
    for token in (parsed[0].children or []) if parsed else []:
        if token.type in ("text", "code_inline", "image"):
            parts.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return " ".join("".join(parts).split()) or "(untitled)"


Piece = tuple[str, int]  # a unit's text and its token count


def _unit(piece: Piece, kind: UnitKind, headings: list[tuple[int, str]], section_start: bool = False) -> Unit:
    text, tokens = piece
    return Unit(
        text=text,
        tokens=tokens,
        kind=kind,
        heading_path=tuple(title for _, title in headings),
        level=headings[-1][0] if headings else 0,
        section_start=section_start,
    )


def _units(pieces: list[Piece], kind: UnitKind, headings: list[tuple[int, str]]) -> list[Unit]:
    return [_unit(piece, kind, headings) for piece in pieces if piece[0].strip()]


def _slice(lines: list[str], start: int, end: int) -> str:
    """Source lines [start, end) without leading or trailing blank lines (indentation kept)."""
    chunk = lines[start:end]
    while chunk and not chunk[-1].strip():
        chunk.pop()
    while chunk and not chunk[0].strip():
        chunk.pop(0)
    return "\n".join(chunk)


def _pieces(
    node: _Block | None, start: int, end: int, counts: LineTokens, kind: UnitKind, config: ChunkingConfig
) -> list[Piece]:
    """Source lines [start, end) of one block (`node`, None for unclaimed lines), pre-split into
    pieces of at most piece_budget tokens if larger, at the safest boundary the block offers."""
    tokens = counts.of(start, end)
    budget = piece_budget(config)
    own_kind = _KINDS.get(node.type, "other") if node is not None else kind  # a fence inside a list is code
    if own_kind in _UNBREAKABLE:
        text = _slice(counts.lines, start, end)
        return [(text, tokens)] if tokens <= config.hard_block_tokens else _counted(line_pieces(text, own_kind, budget))
    if tokens <= budget:
        return [(_slice(counts.lines, start, end), tokens)]
    if own_kind == "paragraph":
        return _counted(sentence_pieces(_slice(counts.lines, start, end), budget))
    if node is not None and node.type in ("bullet_list", "ordered_list", "list_item", "blockquote"):
        children = [child for child in node.children if child.map is not None]
        if children:  # the container's text is never built: only its children's, or theirs
            return _grouped(children, start, end, counts, kind, config)
    return _counted(_line_groups(_slice(counts.lines, start, end), budget))


def _counted(texts: list[str]) -> list[Piece]:
    return [(text, count_tokens(text)) for text in texts]


def _grouped(
    children: list[_Block], start: int, end: int, counts: LineTokens, kind: UnitKind, config: ChunkingConfig
) -> list[Piece]:
    """A container's children (list items, quoted paragraphs) grouped into pieces near the budget.

    Each child owns the lines from its start to the next child's start, so nothing between them is
    lost; a child still larger than a piece is split recursively at its own children.
    """
    budget = piece_budget(config)
    bounds = [start] + [child.first_line for child in children[1:]] + [end]
    sizes = [counts.of(bounds[i], bounds[i + 1]) for i in range(len(children))]
    pieces: list[Piece] = []
    for a, b in group_balanced(sizes, budget):
        if b - a == 1 and sizes[a] > budget:
            pieces += _pieces(children[a], bounds[a], bounds[a + 1], counts, kind, config)
        else:
            pieces.append((_slice(counts.lines, bounds[a], bounds[b]), counts.of(bounds[a], bounds[b])))
    return pieces


def _line_groups(text: str, budget: int) -> list[str]:
    lines = text.split("\n")
    sizes = [count_tokens(line) + 1 for line in lines]
    return ["\n".join(lines[a:b]) for a, b in group_balanced(sizes, budget)]
