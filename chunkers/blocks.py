"""Safe cut points inside one block of text: sentences, words, and lines of fences and tables.

Shared by the layout chunkers (pre-splitting a block too large for a section) and the child splitter
(cutting a section into ~150-token children). Every piece stays valid Markdown on its own: a code
fence cut by lines re-opens and re-closes its fence, a table cut by rows repeats its header.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from cairn.chunkers.tokens import count_tokens

# A sentence ends at . ! or ? (optionally followed by closing quotes, brackets or emphasis) and
# whitespace, when the next sentence does not start in lower case ("e.g. the" stays whole).
_SENTENCE_BREAK = re.compile(r"[.!?][\"'’”)\]*_`]*(\s+)(?=[^\sa-z])")
_FENCE_OPEN = re.compile(r"^(\s*)(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,9}[.)])(?:\s|$)")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the sentences of `text`; together they cover all its non-space text."""
    spans, start = [], 0
    for match in _SENTENCE_BREAK.finditer(text):
        spans.append((start, match.start(1)))
        start = match.end(1)
    spans.append((start, len(text.rstrip())))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def sentence_pieces(text: str, budget: int) -> list[str]:
    """Prose cut between sentences into pieces of at most `budget` tokens (balanced, not greedy)."""
    spans = sentence_spans(text)
    sizes = [count_tokens(text[a:b]) for a, b in spans]
    pieces = []
    for a, b in group_balanced(sizes, budget):
        piece = text[spans[a][0] : spans[b - 1][1]]
        # a "sentence" larger than a piece is no sentence (a log line, a blob): cut it by words
        pieces += word_pieces(piece, budget) if b - a == 1 and sizes[a] > budget else [piece]
    return pieces


def fenced_runs(text: str) -> list[tuple[str, bool]]:
    """The non-blank lines of a block, except that each fenced code region (even one indented inside
    a list item) comes as a single entry flagged True, so that line-level cutting never enters it."""
    runs: list[tuple[str, bool]] = []
    fence: list[str] = []
    marker = ""
    for line in text.split("\n"):
        if fence:
            fence.append(line)
            closing = line.strip()
            if closing.startswith(marker) and set(closing) == {marker[0]}:
                runs.append(("\n".join(fence), True))
                fence = []
        elif opened := _FENCE_OPEN.match(line):
            fence, marker = [line], opened.group(2)
        elif line.strip():
            runs.append((line, False))
    if fence:  # an unclosed fence runs to the end of the block, as in CommonMark
        runs.append(("\n".join(fence), True))
    return runs


def is_list_item_line(line: str) -> bool:
    return bool(_LIST_ITEM.match(line))


def group_balanced(sizes: Sequence[int], capacity: int) -> list[tuple[int, int]]:
    """Consecutive [start, end) groups of items, each within `capacity` where possible, of even size.

    Even groups (rather than greedy-full ones) avoid a tiny last piece, which the packer would
    otherwise have to glue to something unrelated. An item larger than `capacity` forms its own group.
    """
    if not sizes:
        return []
    capacity = max(1, capacity)
    total = sum(sizes)
    target = total / math.ceil(total / capacity) if total else capacity
    groups, start, filled = [], 0, 0
    for i, size in enumerate(sizes):
        if i > start and (filled + size > capacity or filled >= target):
            groups.append((start, i))
            start, filled = i, 0
        filled += size
    groups.append((start, len(sizes)))
    return groups


def word_pieces(text: str, budget: int) -> list[str]:
    """Cut one over-long sentence or line at word boundaries into pieces of at most `budget` tokens."""
    words = text.split()
    sizes = [count_tokens(" " + word) for word in words]
    return [" ".join(words[a:b]) for a, b in group_balanced(sizes, budget)]


def line_pieces(text: str, kind: str, budget: int) -> list[str]:
    """Cut a block by lines into pieces of at most `budget` tokens, each valid Markdown.

    A code fence's pieces each re-open and close the fence (same info string); a table's pieces
    each repeat the header and delimiter rows, so every piece still renders and reads as a table.
    """
    lines = text.split("\n")
    head, body, tail = _frame(lines, kind)
    overhead = count_tokens("\n".join(head + tail)) + 2
    sizes = [count_tokens(line) + 1 for line in body]
    if not body:
        return [text]
    return ["\n".join(head + body[a:b] + tail) for a, b in group_balanced(sizes, budget - overhead)]


def _frame(lines: list[str], kind: str) -> tuple[list[str], list[str], list[str]]:
    """Split a block's lines into the lines every piece must repeat (head, tail) and the body."""
    if kind == "code":
        opened = _FENCE_OPEN.match(lines[0])
        if opened:
            indent, fence = opened.groups()
            last = lines[-1].strip()
            closed = len(lines) > 1 and last.startswith(fence) and set(last) == {fence[0]}
            body = lines[1:-1] if closed else lines[1:]
            return [lines[0]], body, [lines[-1] if closed else indent + fence]
    if kind == "table" and len(lines) >= 2:
        return lines[:2], lines[2:], []
    return [], lines, []
