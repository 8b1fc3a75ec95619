"""Step 11: a confidence tier with its reason, low-relevance flags, and gap alerts."""

from __future__ import annotations

import re

from cairn.query.gate import content_terms
from cairn.query.types import Hit

HIGH, MEDIUM, LOW, SPECULATIVE = "HIGH", "MEDIUM", "LOW", "SPECULATIVE"
NEGATIONS = frozenset({"not", "no"})  # content for the gate, never a "missing topic"
_SEPARATORS = re.compile(r"[-_/.:@]+")


def tier(hits: list[Hit], low_relevance: float) -> tuple[str, str]:
    """HIGH: a strong hit backed by vectors and keywords; MEDIUM: a clear one; LOW: above the floor but weak;
    SPECULATIVE: nothing, or only rescued / injected evidence. Judged on the hit with the best relevance
    (`score`), which the list's order (fused) need not put first; the reason names that hit by its rank."""
    if not hits:
        return SPECULATIVE, "no section passed the relevance floors"
    if all(h.recall_injected or "keyword_rescue" in h.flags for h in hits):
        return SPECULATIVE, "only a recall-guarantee or exact-term match, not a ranked answer"
    rank, best = max(enumerate(hits, 1), key=lambda pair: (pair[1].score, -pair[0]))
    said = f"result {rank}: relevance {best.score:.2f}"
    if best.score >= 0.70 and best.vector_score >= 0.5 and best.keyword_score >= 0.5:
        return HIGH, f"{said}, with vector ({best.vector_score:.2f}) and keyword ({best.keyword_score:.2f}) agreement"
    if best.score >= 0.60:
        return MEDIUM, said
    if best.score >= low_relevance:
        return LOW, f"{said}, just above the low-relevance line {low_relevance:.2f}"
    return SPECULATIVE, f"{said}, below the low-relevance line {low_relevance:.2f}"


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
