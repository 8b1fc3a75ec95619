"""Rules 10 and 13: score floors and the exact-term rescue.

With `floor_scope = "candidate"` (the default) the floors guard the citations: only candidates that pass them
are ranked, cited and packed; the others are the weak ones, listed apart in the diagnostics. With "answer" the
floors only decide whether the question has an answer, and every candidate is then ranked."""

from __future__ import annotations

from dataclasses import dataclass, field

from cairn.query.gate import content_terms
from cairn.query.types import Candidate
from cairn.schemas.config import QueryConfig


@dataclass
class FloorOutcome:
    kept: list[Candidate]
    dropped: int = 0
    rescued: bool = False
    notes: list[str] = field(default_factory=list)
    weak: list[Candidate] = field(default_factory=list)  # what the floors kept out, best first


def passes(c: Candidate, combined_floor: float, vector_floor: float, keyword_override: float) -> bool:
    """combined >= floor, and vector >= its floor unless BM25 ranks it first with a strong score."""
    if c.combined < combined_floor:
        return False
    return c.vector >= vector_floor or (c.keyword_rank == 1 and c.keyword_norm >= keyword_override)


def term_coverage(query: str, c: Candidate) -> float:
    """Share of the query's content words present in the candidate (title, breadcrumbs, text)."""
    terms = content_terms(query)
    if not terms:
        return 0.0
    haystack = set(content_terms(" ".join([c.title, *c.breadcrumbs, c.text])))
    return sum(t in haystack for t in terms) / len(terms)


@dataclass(frozen=True)
class Floors:
    """The floors step's settings ([query] combined_floor, or combined_floor_scoped for a question scoped to a
    document family, vector_floor, keyword_override, keyword_rescue, floor_scope)."""

    combined: float
    vector: float
    keyword_override: float
    keyword_rescue: float
    scope: str

    def admits(self, c: Candidate) -> bool:
        """Whether this one candidate passes (the scope aside)."""
        return passes(c, self.combined, self.vector, self.keyword_override)

    @classmethod
    def of(cls, settings: QueryConfig, scoped: bool = False) -> Floors:
        combined = settings.combined_floor_scoped if scoped else settings.combined_floor
        return cls(
            combined, settings.vector_floor, settings.keyword_override, settings.keyword_rescue, settings.floor_scope
        )


def apply_floors(query: str, ranked: list[Candidate], floors: Floors) -> FloorOutcome:
    """Whether the question has an answer here: some candidate passes the floors (else the exact-term
    rescue, else nothing). scope "answer": then every candidate stays, ranked, each judged by its own score
    (low relevance is flagged, not cut); scope "candidate": each candidate must pass on its own."""
    passing = [c for c in ranked if floors.admits(c)]
    kept = ranked if passing and floors.scope == "answer" else passing
    admitted = {id(c) for c in kept}
    outcome = FloorOutcome(kept, dropped=len(ranked) - len(kept), weak=[c for c in ranked if id(c) not in admitted])
    if kept:
        return outcome
    # Exact-term questions ("what is FOO_BAR_TIMEOUT") can score low on vectors: keep the one strongest
    # keyword match, if it really contains the words asked about.
    keyword = [(c.keyword_rank, c) for c in ranked if c.keyword_rank is not None]
    if keyword:
        best = min(keyword, key=lambda ranked_match: ranked_match[0])[1]
        coverage = term_coverage(query, best)
        if coverage >= floors.keyword_rescue:
            best.flags.append("keyword_rescue")
            outcome.kept, outcome.rescued = [best], True
            outcome.weak = [c for c in ranked if c is not best]
            outcome.dropped = len(outcome.weak)
            outcome.notes.append(f"kept one keyword match covering {coverage:.0%} of the query terms")
    return outcome
