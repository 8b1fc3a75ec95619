"""Step 3's arithmetic: per-leg ranked lists -> one score per candidate (RRF or a normalised weighted sum).

The combined score is always the weighted one ([query] vector_weight x cosine + keyword_weight x BM25 / best
BM25; 0.85 / 0.15 by default, 0.75 / 0.25 for a question scoped to one document family): it is calibrated (a
cosine is comparable across queries), so floors and confidence tiers read it whatever ranks the list.
"""

from __future__ import annotations

from cairn.query.types import Candidate
from cairn.schemas.config import QueryConfig


def rrf(rankings: list[list[str]], k: int) -> dict[str, float]:
    """Reciprocal rank fusion: sum over lists of 1 / (k + rank), rank 1-based (k=60 as in Cormack et al.)."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, 1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    return scores


def normalise_keyword(candidates: list[Candidate]) -> None:
    """BM25 has no fixed scale: divide by the query's best, so the top keyword match is 1.0."""
    best = max((c.keyword for c in candidates), default=0.0)
    for c in candidates:
        c.keyword_norm = c.keyword / best if best > 0 else 0.0


def leg_weights(settings: QueryConfig, scoped: bool, dense_on: bool, keyword_on: bool) -> tuple[float, float]:
    """(vector, keyword) weights of the weighted sum: [query] vector_weight / keyword_weight, their `_scoped`
    pair for a question scoped to one document family; one leg alone weighs 1."""
    if not keyword_on:
        return 1.0, 0.0
    if not dense_on:
        return 0.0, 1.0
    if scoped:
        return settings.vector_weight_scoped, settings.keyword_weight_scoped
    return settings.vector_weight, settings.keyword_weight


def combined(c: Candidate, vector_weight: float, keyword_weight: float) -> float:
    """The calibrated score: the weighted sum of the cosine (clipped to [0, 1]) and the normalised BM25."""
    return vector_weight * min(max(c.vector, 0.0), 1.0) + keyword_weight * c.keyword_norm


def fuse(
    candidates: list[Candidate],
    rankings: list[list[str]],
    mode: str,
    rrf_k: int,
    vector_weight: float,
    keyword_weight: float,
) -> list[Candidate]:
    """Score every candidate and return them best first."""
    normalise_keyword(candidates)
    ranked = rrf(rankings, rrf_k) if mode == "rrf" else {}
    for c in candidates:
        c.combined = combined(c, vector_weight, keyword_weight)
        c.fused = ranked.get(c.chunk_id, 0.0) if mode == "rrf" else c.combined
    return sorted(candidates, key=lambda c: (-c.fused, -c.combined, c.chunk_id))
