"""A section's units -> child chunks of ~child_target tokens: what similarity search matches.

A child should say one thing, so it is cut at the most natural boundary available: between blocks,
else between list items, sentences or lines, and only as a last resort between words. Blocks are
first broken into atoms at those boundaries, each carrying the price of cutting before it; the
same band-packing programme as for sections then picks the cuts. A block that fits in a child is
one atom and is never cut (a 150-token code fence stays whole); a larger fence or table is cut by
lines into self-contained pieces. Headings stay attached to the text they introduce.

Children concatenated reproduce the section: only whitespace between atoms is normalised, and a
fence or table cut into pieces repeats its fence or header lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from cairn.chunkers.blocks import fenced_runs, is_list_item_line, line_pieces, sentence_spans, word_pieces
from cairn.chunkers.segmentation import Band, plan_segments
from cairn.chunkers.tokens import count_tokens
from cairn.chunkers.units import UNIT_JOINER, Unit, glued_to_next
from cairn.schemas.config import ChunkingConfig
from cairn.schemas.records import Chunk

# Price of cutting just before an atom, by the boundary it sits on.
_BLOCK_CUT = 0.0
_LIST_ITEM_CUT = 0.2
_SENTENCE_CUT = 0.5
_PIECE_CUT = 0.5  # between two line-pieces of one fence or table
_LINE_CUT = 0.8
_BEFORE_FENCE_CUT = 1.5  # a code block belongs with the line that introduces it
_WORD_CUT = 3.0
_PROSE_KINDS = ("paragraph", "quote")


@dataclass(frozen=True)
class _Atom:
    text: str
    joiner: str  # what separates it from the previous atom when both land in one child
    cut_cost: float  # price of a child boundary just before this atom
    tokens: int
    glued: bool = False  # a heading: may not end a child


def _atom(text: str, joiner: str, cut_cost: float) -> _Atom:
    return _Atom(text, joiner, cut_cost, count_tokens(text))


def split_children(units: Sequence[Unit], config: ChunkingConfig) -> list[Chunk]:
    """Child chunks of a section, in order; a section within child_max_tokens is a single child.

    A definition unit (one with a term) is always a child of its own, tagged with its term, so that a
    "what is the Determination Date" question hits that definition and nothing else; so is a unit marked
    `alone` (an agreement's opening statement). The headings just before such a unit go with it, not with
    the text before them (a heading introduces what follows it); the text between is cut as usual."""
    if any(unit.term or unit.alone for unit in units):
        chunks: list[Chunk] = []
        run: list[Unit] = []
        for unit in [*units, None]:
            if unit is None or unit.term or unit.alone:
                lead = _trailing_headings(run) if unit is not None else 0
                if run[: len(run) - lead]:
                    chunks += _split_run(run[: len(run) - lead], config)
                if unit is not None:
                    chunks += [
                        replace(c, term=unit.term, alone=unit.alone)
                        for c in _split_run([*run[len(run) - lead :], unit], config)
                    ]
                run = []
            else:
                run.append(unit)
        return [replace(chunk, order=order) for order, chunk in enumerate(chunks)]
    return _split_run(units, config)


def _trailing_headings(run: Sequence[Unit]) -> int:
    """How many units at the end of `run` are headings (they introduce the unit that comes next)."""
    count = 0
    while count < len(run) and run[len(run) - 1 - count].is_heading:
        count += 1
    return count


def _split_run(units: Sequence[Unit], config: ChunkingConfig) -> list[Chunk]:
    whole = UNIT_JOINER.join(unit.text for unit in units)
    whole_tokens = count_tokens(whole)
    if whole_tokens <= config.child_max_tokens:
        return [Chunk(order=0, text=whole, token_count=whole_tokens)] if whole.strip() else []
    atoms: list[_Atom] = []
    lead = 0  # tokens of the heading chain glued to the current unit: they share its child
    for unit, glued in zip(units, glued_to_next(units)):
        atoms += _atoms(unit, glued, config.child_max_tokens - lead, config)
        lead = lead + unit.tokens + 1 if glued else 0
    band = Band(config.child_min_tokens, config.child_target_tokens, config.child_max_tokens)
    spans = plan_segments(
        [atom.tokens for atom in atoms],
        band,
        [atom.cut_cost for atom in atoms],
        [0.0] * len(atoms),
        [atom.glued for atom in atoms],
    )
    chunks = []
    for order, (start, end) in enumerate(spans):
        text = atoms[start].text + "".join(atom.joiner + atom.text for atom in atoms[start + 1 : end])
        chunks.append(Chunk(order=order, text=text, token_count=count_tokens(text)))
    return chunks


def _atoms(unit: Unit, glued: bool, room: int, config: ChunkingConfig) -> list[_Atom]:
    """A unit's atoms; the first starts at a block boundary, the rest at the unit's inner boundaries.

    A unit that fits in `room` (a child, less the heading glued before it) is a single atom.
    """
    limit = config.child_max_tokens
    if unit.tokens <= room or unit.is_heading:
        return [_Atom(unit.text, UNIT_JOINER, _BLOCK_CUT, unit.tokens, glued)]
    if unit.kind in ("code", "table"):
        inner = [_atom(piece, UNIT_JOINER, _PIECE_CUT) for piece in line_pieces(unit.text, unit.kind, limit)]
    elif unit.kind in _PROSE_KINDS:
        inner = _sentence_atoms(unit.text, limit)
    else:
        inner = _line_atoms(unit.text, limit)
    return [replace(inner[0], joiner=UNIT_JOINER, cut_cost=_BLOCK_CUT), *inner[1:]]


def _sentence_atoms(text: str, limit: int) -> list[_Atom]:
    atoms, previous_end = [], 0
    for start, end in sentence_spans(text):
        joiner = "\n" if "\n" in text[previous_end:start] else " "
        atoms += _bounded(text[start:end], joiner, _SENTENCE_CUT, limit)
        previous_end = end
    return atoms


def _line_atoms(text: str, limit: int) -> list[_Atom]:
    atoms = []
    for run, is_fence in fenced_runs(text):
        if is_fence:  # a nested fence (a list item's command) stays whole up to a child
            pieces = [run] if count_tokens(run) <= limit else line_pieces(run, "code", limit)
            atoms.append(_atom(pieces[0], "\n", _BEFORE_FENCE_CUT))
            atoms += [_atom(piece, "\n", _PIECE_CUT) for piece in pieces[1:]]
            continue
        cost = _LIST_ITEM_CUT if is_list_item_line(run) else _LINE_CUT
        if count_tokens(run) <= limit:
            atoms.append(_atom(run, "\n", cost))
        else:
            sentences = _sentence_atoms(run, limit)
            atoms += [replace(sentences[0], joiner="\n", cut_cost=cost), *sentences[1:]]
    return atoms


def _bounded(sentence: str, joiner: str, cost: float, limit: int) -> list[_Atom]:
    """A sentence as one atom, or, if longer than a child, as word-boundary pieces."""
    if count_tokens(sentence) <= limit:
        return [_atom(sentence, joiner, cost)]
    pieces = word_pieces(sentence, limit)
    return [_atom(pieces[0], joiner, cost), *(_atom(piece, " ", _WORD_CUT) for piece in pieces[1:])]
