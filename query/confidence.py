"""Rules 4 and 5: a confidence tier with its reason, and gap alerts (the question's terms no returned text has).

Rule 4's tiers, read from the matched chunks of the returned sections (each a child chunk with its calibrated
combined score): HIGH when at least two are direct matches and the top one is above the high line; MEDIUM when
the top is above the medium line; LOW above the low line; else SPECULATIVE. The lines are the spec's (0.85,
0.75, 0.65, 0.45) mapped onto Cairn's combined scale ([query] confidence_*; docs/retrieval.md "Scores" says
how). The reason counts the direct matches and names the sections they are in ("3 direct matches in Step 2")."""

from __future__ import annotations

import re
from dataclasses import dataclass

from cairn.query.gate import content_terms
from cairn.query.types import Hit

HIGH, MEDIUM, LOW, SPECULATIVE = "HIGH", "MEDIUM", "LOW", "SPECULATIVE"
NEGATIONS = frozenset({"not", "no"})  # content for the gate, never a "missing topic"
_SEPARATORS = re.compile(r"[-_/.:@]+")
PLACES_NAMED = 3  # sections a reason names at most


@dataclass(frozen=True)
class Tiers:
    """Rule 4's lines on the combined scale ([query] confidence_high, _direct, _medium, _low)."""

    high: float  # the top match above this, and two direct matches: HIGH (spec 0.85)
    direct: float  # a chunk above this is a direct match (spec 0.75)
    medium: float  # the top match above this: MEDIUM (spec 0.65)
    low: float  # above this: LOW, else SPECULATIVE (spec 0.45)
    direct_needed: int = 2


@dataclass(frozen=True)
class Match:
    """One matched chunk of a returned section: its score and where it is (the section's last citation label)."""

    score: float
    where: str


def tier(hits: list[Hit], matches: list[Match], tiers: Tiers) -> tuple[str, str]:
    """The tier and its reason, from the matched chunks of the ranked hits (`matches`; neighbours added by
    expansion have none, a recall-injected section counts only as evidence beside ranked ones)."""
    if not hits:
        return SPECULATIVE, "no section passed the relevance floors"
    if all(h.recall_injected or "keyword_rescue" in h.flags for h in hits):
        return SPECULATIVE, "only a recall-guarantee or exact-term match, not a ranked answer"
    if not matches:
        return SPECULATIVE, "no matched chunk, only sections added around others"
    best = max(matches, key=lambda m: m.score)
    direct = [m for m in matches if m.score > tiers.direct]
    if len(direct) >= tiers.direct_needed and best.score > tiers.high:
        return HIGH, f"{_count(direct)} (best {best.score:.2f})"
    if best.score > tiers.medium:
        if direct:
            return MEDIUM, f"{_count(direct)} (best {best.score:.2f})"
        return MEDIUM, f"found in context, no direct match: best {best.score:.2f} in {best.where}"
    if best.score > tiers.low:
        return LOW, f"inferred from related sections, no direct match: best {best.score:.2f} in {best.where}"
    return SPECULATIVE, f"best match {best.score:.2f} in {best.where}, not above {tiers.low:.2f}"


def _count(direct: list[Match]) -> str:
    """ "3 direct matches in Step 2" / "3 direct matches: 2 in Step 2, 1 in Verify" (best places first)."""
    places: dict[str, int] = {}
    for m in sorted(direct, key=lambda m: -m.score):
        places[m.where] = places.get(m.where, 0) + 1
    n = len(direct)
    said = f"{n} direct match{'es' if n > 1 else ''}"
    if len(places) == 1:
        return f"{said} in {next(iter(places))}"
    named = [f"{count} in {where}" for where, count in list(places.items())[:PLACES_NAMED]]
    more = len(places) - PLACES_NAMED
    return f"{said}: {', '.join(named)}" + (f" and {more} more section{'s' if more > 1 else ''}" if more > 0 else "")


def gaps(query: str, texts: list[str]) -> list[str]:
    """The query's content words that none of the returned text contains, compared as words: case,
    plurals and common endings aside, and a compound (`edge-proxy`, `edge_proxy`, `edge/proxy`) matching
    its parts written apart (`edge proxy`) and the other way round."""
    present: set[str] = set()
    for word in content_terms(" ".join(texts)):
        present.update(_stem(part) for part in _parts(word))
    return [
        term
        for term in content_terms(query)
        if term not in NEGATIONS and not all(_stem(part) in present for part in _parts(term))
    ]


def _parts(word: str) -> list[str]:
    """A word, or a compound's parts: "edge-proxy" -> ["edge", "proxy"]; "v1.2" stays whole."""
    parts = [p for p in _SEPARATORS.split(word) if p]
    return parts if len(parts) > 1 and not any(p.isdigit() for p in parts) else [word]


def _stem(word: str) -> str:
    """A light stem (the index has no stemmer either): plural and verb endings off, then a few letters of
    the end (a long name keeps most of itself): "proxies"/"proxy", "caches"/"cache", "reloading"/"reload",
    "eviction"/"evicts" each meet; "KubePodCrashLooping"/"KubePodNotReady" do not. A word with digits or
    symbols (INC-1234, v1.2) is an identifier, compared whole."""
    if not word.isalpha():
        return word
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + keep
            break
    else:
        if word.endswith("es") and word[:-2].endswith(("s", "x", "z", "ch", "sh")):
            word = word[:-2]
        elif word.endswith("s") and not word.endswith("ss") and len(word) > 3:
            word = word[:-1]
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word[: max(5, len(word) - 3)]
