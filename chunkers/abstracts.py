"""Extractive section abstracts: the breadcrumbs plus the section's most informative sentences.

The abstract is embedded as the section's summary vector, so it must name the section's subject and
its distinctive terms, deterministically and without a model. A sentence is informative when it
carries terms that are rare across the document's sections (IDF), so the abstract of "Diagnosis"
favours what sets diagnosis apart from the rest of the runbook. Prose is preferred over code lines
and table rows, which are dense in identifiers but read poorly on their own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from cairn.chunkers.blocks import is_list_item_line, sentence_spans
from cairn.chunkers.tokens import count_tokens, truncate_tokens
from cairn.schemas.config import ChunkingConfig

BREADCRUMB_SEPARATOR = " > "
# Weight of a candidate by where it comes from: a prose sentence states something; a code line or
# a table row is evidence that needs its prose around it.
_KIND_WEIGHT = {"prose": 1.0, "heading": 0.7, "table": 0.6, "code": 0.3}
_TERM = re.compile(r"[^\W_][\w\-.]*[^\W_]|[^\W_]", re.UNICODE)
_STOPWORDS = frozenset(
    "a an and are as at be by can do does for from has have if in into is it its may must no not of on "
    "or should so than that the their then there these this to use used was were when which will with "
    "you your".split()
)
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_TABLE_DELIMITER = re.compile(r"^\s*\|?\s*:?-{2,}")
_MARKUP = [
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),  # images -> alt text
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),  # links -> their text
    (re.compile(r"^\s*(?:#{1,6}\s+|>\s?|(?:[-*+]|\d{1,9}[.)])\s+)+"), ""),  # heading, quote, list markers
    (re.compile(r"(\*\*|__|`)"), ""),
]


@dataclass(frozen=True)
class _Candidate:
    position: int
    text: str
    kind: str  # "prose" | "heading" | "table" | "code"


def terms(text: str) -> set[str]:
    return {t for t in (m.group(0).lower() for m in _TERM.finditer(text)) if t not in _STOPWORDS}


def document_idf(section_texts: Sequence[str]) -> dict[str, float]:
    """Smoothed inverse document frequency of each term, over the sections of one document."""
    frequency: dict[str, int] = {}
    for text in section_texts:
        for term in terms(text):
            frequency[term] = frequency.get(term, 0) + 1
    n = len(section_texts)
    return {term: math.log((1 + n) / (1 + df)) + 1.0 for term, df in frequency.items()}


def extractive_abstract(
    breadcrumbs: Sequence[str], section_text: str, config: ChunkingConfig, idf: dict[str, float]
) -> str:
    """The breadcrumbs line, then the best sentences in document order, within the abstract band.

    Sentences are taken best first until the abstract reaches abstract_min_tokens, skipping any that
    would overflow abstract_max_tokens; if the best remaining one is too long to reach the minimum,
    it is truncated. A section shorter than the minimum is reproduced whole (after the breadcrumbs).
    """
    header = BREADCRUMB_SEPARATOR.join(breadcrumbs)
    limit, floor = config.abstract_max_tokens, config.abstract_min_tokens
    if count_tokens(section_text) < floor:
        return _cut(f"{header}\n{section_text}".rstrip(), limit)
    crumbs = {crumb.strip().lower() for crumb in breadcrumbs}  # the header already says these
    fresh = [c for c in _candidates(section_text) if c.text.strip().lower() not in crumbs]
    unseen = max(idf.values(), default=1.0)  # a term the IDF never saw is as rare as the rarest
    ranked = sorted(fresh, key=lambda c: (-_score(c, idf, unseen), c.position))
    chosen: dict[int, str] = {}
    size = count_tokens(header)
    for candidate in ranked:
        trial = {**chosen, candidate.position: candidate.text}
        trial_size = count_tokens(_assemble(header, trial))
        if trial_size <= limit:
            chosen, size = trial, trial_size
            if size >= floor:
                break
    leftover = [c for c in ranked if c.position not in chosen]
    if size < floor and leftover:  # every remaining sentence overflows: take the best, cut short
        chosen[leftover[0].position] = _cut(leftover[0].text, max(0, limit - size - 1))
    return _cut(_assemble(header, chosen), limit)  # joining can shift the count by a token or two


def _cut(text: str, limit: int) -> str:
    """At most `limit` tokens; a cut inside a multi-byte character leaves no replacement mark."""
    return truncate_tokens(text, limit).rstrip("\ufffd")


def _assemble(header: str, chosen: dict[int, str]) -> str:
    return "\n".join([header] + [chosen[position] for position in sorted(chosen) if chosen[position]])


def _score(candidate: _Candidate, idf: dict[str, float], unseen: float) -> float:
    """Sum of the IDF of the candidate's distinct terms, over the square root of their number: longer
    sentences still score higher, but not in proportion to their length."""
    found = terms(candidate.text)
    if not found:
        return 0.0
    weight = math.fsum(idf.get(term, unseen) for term in found)  # exact: the same whatever order a set iterates in
    return _KIND_WEIGHT[candidate.kind] * weight / math.sqrt(len(found))


def _candidates(text: str) -> list[_Candidate]:
    """The section's sentences, code lines and table rows, with Markdown markup removed from prose."""
    found: list[_Candidate] = []
    in_fence = False
    block: list[str] = []

    def flush() -> None:
        for kind, item in _prose_items(block):
            for start, end in sentence_spans(item):
                found.append(_Candidate(len(found), item[start:end], kind))
        block.clear()

    for line in text.split("\n"):
        if _FENCE.match(line):
            flush()
            in_fence = not in_fence
        elif in_fence:
            if line.strip():
                found.append(_Candidate(len(found), line.strip(), "code"))
        elif line.lstrip().startswith("|"):
            flush()
            if not _TABLE_DELIMITER.match(line):
                found.append(_Candidate(len(found), line.strip(), "table"))
        elif not line.strip():
            flush()
        else:
            block.append(line)
    flush()
    return found


def _prose_items(lines: list[str]) -> list[tuple[str, str]]:
    """A prose block as (kind, text) items: each heading and list item on its own, markup removed."""
    items: list[tuple[str, list[str]]] = []
    for line in lines:
        heading = line.lstrip().startswith("#")
        if not items or heading or is_list_item_line(line) or items[-1][0] == "heading":
            items.append(("heading" if heading else "prose", []))
        items[-1][1].append(_plain(line))
    return [(kind, " ".join(p for p in parts if p)) for kind, parts in items if any(parts)]


def _plain(line: str) -> str:
    for pattern, replacement in _MARKUP:
        line = pattern.sub(replacement, line)
    return line.strip()
