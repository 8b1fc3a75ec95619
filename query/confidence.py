"""Step 11: a confidence tier with its reason, low-relevance flags, and gap alerts."""
from __future__ import annotations

from cairn.query.gate import content_terms
from cairn.query.types import Hit

HIGH, MEDIUM, LOW, SPECULATIVE = "HIGH", "MEDIUM", "LOW", "SPECULATIVE"
NEGATIONS = frozenset({"not", "no"})  # content for the gate, never a "missing topic"


def tier(hits: list[Hit], low_relevance: float) -> tuple[str, str]:
    """HIGH: a strong top hit backed by vectors and keywords; MEDIUM: a clear top hit; LOW: above the floor
    but weak; SPECULATIVE: nothing, or only rescued / injected evidence."""
    if not hits:
        return SPECULATIVE, "no section passed the relevance floors"
    top = hits[0]
    if all(h.recall_injected or "keyword_rescue" in h.flags for h in hits):
        return SPECULATIVE, "only a recall-guarantee or exact-term match, not a ranked answer"
    if top.score >= 0.70 and top.vector_score >= 0.5 and top.keyword_score >= 0.5:
        return HIGH, f"top score {top.score:.2f} with vector and keyword agreement"
    if top.score >= 0.60:
        return MEDIUM, f"top score {top.score:.2f}"
    if top.score >= low_relevance:
        return LOW, f"top score {top.score:.2f}, just above the low-relevance line {low_relevance:.2f}"
    return SPECULATIVE, f"top score {top.score:.2f} is below the low-relevance line {low_relevance:.2f}"


def gaps(query: str, texts: list[str]) -> list[str]:
    """The query's content words that none of the returned text contains (the caller should say so)."""
    found = set(content_terms(" ".join(texts)))
    stems = {_stem(w) for w in found}
    return [t for t in content_terms(query) if t not in found and _stem(t) not in stems and t not in NEGATIONS]


def _stem(word: str) -> str:
    """A crude stem (the index has no stemmer either): "reloading"/"reload" share "reloa", "lags"/"lag" "lag"."""
    if len(word) > 3 and word.endswith("s"):
        word = word[:-1]
    return word[:5]
