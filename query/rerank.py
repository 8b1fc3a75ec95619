"""Rule 11, the opportunistic rerank: when the top fused candidate is borderline (its combined score in
[query] rerank_band), a reranker model (embedding/reranker.py) reads the question beside each of the top
rerank_top candidates and their order becomes its order; a confident or hopeless top skips it.

What the model reads of a candidate: its title and breadcrumbs, then the child chunk's text. The order of the
top N is the model's (rerank_weight 1.0), or a blend of the model's and the fusion's scores, each min-max
scaled over the N (rerank_weight w: w x model + (1 - w) x fusion). The candidates keep their own calibrated
combined score (what floors, flags and confidence read); the fused scores the N had are handed out again in
the new order, so the steps after this one (dominance, continuity) see the reranked order on the scale they
know.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from cairn.embedding.reranker import Reranker
from cairn.query.types import Candidate

FLAG = "reranked"


def in_band(top: float, band: tuple[float, float]) -> bool:
    """A borderline top score: at least the band's low end and below its high end."""
    lo, hi = band
    return lo <= top < hi


def passage(c: Candidate) -> str:
    """What the model reads of a candidate: where it sits (title › breadcrumbs), then its text."""
    heading = " › ".join(part for part in [c.title, *c.breadcrumbs] if part)
    return f"{heading}\n{c.text}" if heading else c.text


def _scaled(values: np.ndarray) -> np.ndarray:
    span = float(values.max() - values.min()) if len(values) else 0.0
    return (values - values.min()) / span if span > 0 else np.zeros_like(values)


@dataclass(frozen=True)
class RerankOutcome:
    ranked: list[Candidate]
    used: bool  # the model ran
    ms: float  # its time (0.0 when skipped)


def reorder(head: list[Candidate], scores: np.ndarray, weight: float = 1.0) -> list[Candidate]:
    """`head` (best first) in the order of the model's `scores` (weight 1.0), or of w x scores + (1 - w) x fused,
    each min-max scaled over `head`; ties keep the fusion's order. The fused scores `head` had are handed out
    again in the new order, and each candidate is flagged "reranked"."""
    fused = np.array([c.fused for c in head], dtype=np.float64)
    scores = np.asarray(scores, dtype=np.float64)
    key = weight * _scaled(scores) + (1.0 - weight) * _scaled(fused) if weight < 1.0 else scores
    order = sorted(range(len(head)), key=lambda i: (-key[i], -fused[i], head[i].chunk_id))
    for slot, i in zip(sorted(fused, reverse=True), order):
        head[i].fused = float(slot)
        head[i].flags.append(FLAG)
    return [head[i] for i in order]


def model_inputs(ranked: list[Candidate], top: int) -> list[str]:
    """What the model is given: the passages of the top `top` candidates, best first (each pair is cut to the
    model's `max_length` word pieces, the passage first, by the model)."""
    return [passage(c) for c in ranked[:top]]


def rerank(
    query: str,
    ranked: list[Candidate],
    model: Reranker,
    top: int,
    weight: float = 1.0,
    max_tokens: int | None = None,
) -> RerankOutcome:
    """The top `top` candidates of `ranked` (best first) reordered by `model` (`reorder`), the rest after them
    as they were; the model reads at most `max_tokens` word pieces of the question and each passage together;
    nothing to reorder under two candidates."""
    head, rest = ranked[:top], ranked[top:]
    if len(head) < 2:
        return RerankOutcome(ranked, False, 0.0)
    started = time.perf_counter()
    scores = model.score(query, model_inputs(head, top), max_tokens)
    ms = round((time.perf_counter() - started) * 1000, 2)
    return RerankOutcome(reorder(head, scores, weight) + rest, True, ms)
