"""The query pipeline as one ordered list of steps, run by one conductor (`run`). Every step reads what the steps
before it put on the `Answer` (typed fields), sets its own, and returns its part of the diagnostics (`Notes`), or
`Stop` with why the answer is empty; the conductor times each step that ran and assembles the diagnostics. No step
writes another's diagnostics, and none holds state between questions.

    gate -> embed (transform) -> search -> fusion -> rerank -> floors -> selection (promotion, one version per
    document, dominance, continuity, expansion, diversity, the short-document guarantee, the cut to k) -> fetch
    (parents read by id, ACL re-checked: the hits) -> packing -> account (confidence, gaps, rule 18 and 25's counts)

Each switchable step is off with `[query] steps = { name = false }` (schemas/query_config.py QUERY_STEPS).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cairn.embedding import Encoder
from cairn.embedding.reranker import Reranker
from cairn.index.protocol import IndexReader
from cairn.query import confidence as conf
from cairn.query.citations import subsection_citations
from cairn.query.empty import BELOW_FLOORS, TOO_VAGUE, message, why_nothing_found
from cairn.query.expansion import Expansion, expand, neighbour_trace, served_and_context
from cairn.query.floors import Floors, apply_floors
from cairn.query.fusion import fuse, leg_weights
from cairn.query.gate import judge
from cairn.query.hits import documents, final_order, make_hit, matches, weak_hits
from cairn.query.packing import ChildText, ContextSection, PackItem, pack
from cairn.query.parents import (
    children_per_document,
    enclosing_sections,
    fetch_parents,
    neighbours,
    one_version_per_document,
)
from cairn.query.rerank import in_band, rerank
from cairn.query.search import Found, Search
from cairn.query.selection import (
    Seed,
    SparseDocLimits,
    by_continuity,
    deferred_by_diversity,
    distribution,
    diversify,
    dominance,
    keep_primary,
    newest_version,
    promote,
    sparse_doc_recall,
)
from cairn.query.specific import IndexTerms
from cairn.query.transform import Transform, seeds
from cairn.query.types import Ask, Block, Candidate, Diagnostics, DominanceTrace, Hit, RetrievalResult
from cairn.schemas.config import QueryConfig
from cairn.schemas.rows import ChunkRow

Notes = dict[str, Any]  # a step's part of the diagnostics (query/types.py Diagnostics names every key)


@dataclass(frozen=True)
class Context:
    """What every step of one question reads: the index, the encoder of its vectors, the settings, the hooks."""

    reader: IndexReader
    encoder: Encoder
    settings: QueryConfig
    ask: Ask
    transform: Transform | None = None
    reranker: Callable[[], Reranker] | None = None  # loads the model at its first use

    @property
    def floors(self) -> Floors:
        return Floors.of(self.settings, self.ask.scoped)

    def guards_citations(self) -> bool:
        """Whether the floors also judge what steps after them add (neighbours, injected sections)."""
        return self.settings.enabled("floors") and self.settings.floor_scope == "candidate"


@dataclass(frozen=True)
class Stop:
    """The answer is empty: why (query/empty.py's reasons) and what the confidence reason says."""

    why: str
    said: str
    example: str = ""  # for a vague question: a heading of the caller's own index (query/specific.py)
    notes: Notes = field(default_factory=dict)  # the stopping step's own part of the diagnostics


@dataclass
class Answer:
    """What the steps produce, in order; each field is set by one step."""

    vectors: list[list[float]] = field(default_factory=list)  # embed
    found: Found | None = None  # search
    ranked: list[Candidate] = field(default_factory=list)  # fusion, reordered by rerank
    kept: list[Candidate] = field(default_factory=list)  # floors
    weak: list[Candidate] = field(default_factory=list)  # floors: what they kept out
    chosen: list[Seed] = field(default_factory=list)  # selection, cut to k
    rows: dict[str, ChunkRow] = field(default_factory=dict)  # parent rows read so far, by chunk id
    context: list[Seed] = field(default_factory=list)  # selection: neighbours that may only be context (rule 10)
    primary: str | None = None  # selection: the dominant document
    pairs: list[tuple[Seed, Hit]] = field(default_factory=list)  # fetch, in rule 21's final order
    blocks: list[Block] = field(default_factory=list)  # packing
    tier: str = conf.SPECULATIVE  # account
    tier_reason: str = ""
    gaps: list[str] = field(default_factory=list)

    @property
    def hits(self) -> list[Hit]:
        return [hit for _, hit in self.pairs]


Step = Callable[[Context, Answer], "Notes | Stop | None"]  # None: the step is off and did nothing


# ---- the steps -------------------------------------------------------------------------------------------
def gate_step(ctx: Context, answer: Answer) -> Notes | Stop:
    """Rule 9: a question too vague to search gets guidance (scoped: the caller named the subject); a question of
    few words is searched when one of them is specific in this index (query/specific.py)."""
    s, on = ctx.settings, ctx.settings.enabled
    index = IndexTerms(ctx.reader, ctx.ask.where) if on("gate") else None  # a few words: are they specific here?
    least = s.gate_min_terms_scoped if ctx.ask.scoped else s.gate_min_terms
    verdict = judge(ctx.ask.text, least, s.gate_symptoms, index, s.gate_specific_share)
    if on("gate") and not verdict.passed:
        return Stop(TOO_VAGUE, "query too vague to search", verdict.example, {"gate": verdict.reason})
    return {"gate": verdict.reason}


def embed_step(ctx: Context, answer: Answer) -> Notes:
    """The question (and the transform hook's seeds) as query vectors of the collection's encoder."""
    s = ctx.settings
    transform = ctx.transform if s.enabled("transform") else None
    texts, note = seeds(ctx.ask.text, transform, s.transform_replaces_query, s.transform_timeout_seconds)
    answer.vectors = [v.tolist() for v in ctx.encoder.encode_queries(texts)]
    return {"transform": note}


def search_step(ctx: Context, answer: Answer) -> Notes:
    """The enabled legs (dense full text, dense abstract, BM25), each pre-filtered inside the engine."""
    search = Search(ctx.reader, ctx.settings, ctx.encoder.identity)
    limit = max(ctx.settings.candidates, ctx.ask.k * 4)
    answer.found = search.legs(ctx.ask.text, answer.vectors, ctx.ask.where, limit)
    return {}


def fusion_step(ctx: Context, answer: Answer) -> Notes:
    s, on = ctx.settings, ctx.settings.enabled
    assert answer.found is not None
    vw, kw = leg_weights(s, ctx.ask.scoped, on("dense_leg") or on("abstract_leg"), on("keyword_leg"))
    ranked = fuse(answer.found.candidates, answer.found.rankings, s.fusion, s.rrf_k, vw, kw)
    answer.ranked = answer.kept = ranked
    return {
        "candidates": len(ranked),
        "vector_max": round(max((c.vector for c in ranked), default=0.0), 4),
        "keyword_max": round(max((c.keyword for c in ranked), default=0.0), 4),
        "combined_top": round(max((c.combined for c in ranked), default=0.0), 4),
        "chunks": {"searched": len(ranked)},
    }


def rerank_step(ctx: Context, answer: Answer) -> Notes | None:
    """Rule 11: a borderline top only."""
    s, ranked = ctx.settings, answer.ranked
    if not (
        s.enabled("rerank") and ranked and ctx.reranker and in_band(max(c.combined for c in ranked), s.rerank_band)
    ):
        return None
    reranked = rerank(ctx.ask.text, ranked, ctx.reranker(), s.rerank_top, s.rerank_weight, s.rerank_tokens)
    answer.ranked = answer.kept = reranked.ranked
    return {"rerank_used": reranked.used, "rerank_ms": reranked.ms}


def floors_step(ctx: Context, answer: Answer) -> Notes | None:
    """Rule 10: candidates under the floors are kept out (an exact-term keyword match may be rescued)."""
    if not ctx.settings.enabled("floors"):
        return None
    outcome = apply_floors(ctx.ask.text, answer.ranked, ctx.floors)
    answer.kept, answer.weak = outcome.kept, outcome.weak
    return {
        "floors": {"dropped": outcome.dropped, "rescued": outcome.rescued, "notes": outcome.notes},
        "weak_hits": weak_hits(outcome.weak, outcome.kept, ctx.ask.k),
    }


def nothing_kept(ctx: Context, answer: Answer) -> Notes | Stop:
    """An empty answer says why: sections found and none relevant enough, or nothing this principal can read in
    this scope (one existence query, only when the legs found nothing at all)."""
    if answer.kept:
        return {"chunks": {"passed_floors": len(answer.kept)}}
    if answer.found is not None and answer.found.candidates:
        return Stop(BELOW_FLOORS, "no section passed the relevance floors")
    reason = why_nothing_found(ctx.reader, ctx.ask.principal, ctx.ask.scope, ctx.settings.enabled("dense_leg"))
    return Stop(reason, "nothing found to search")


def selection_step(ctx: Context, answer: Answer) -> Notes:
    """The sections that answer, in order, cut to k: promotion (one version per document), the dominance gate
    (rule 20) and rule 21's order, expansion (rule 23), diversity (rule 12), the short-document guarantee (rules
    1-2) just before the cut, where nothing after can undo it."""
    s, on, ask = ctx.settings, ctx.settings.enabled, ctx.ask
    assert answer.found is not None
    promoted = promote(answer.kept)
    sections, older = newest_version(promoted)
    notes: Notes = {"dedupe": {"same_section": len(answer.kept) - len(promoted), "older_version": older}}
    chunks = {"passed_floors": len(answer.kept), "sections": len(sections)}
    primary = None
    spread = distribution(by_continuity(sections, None), ask.k)  # rule 25 before the gate, where mixing shows
    notes.update(
        documents=spread.documents,
        dominance_score=spread.dominance_score,
        primary_doc_fraction=spread.primary_doc_fraction,
    )
    if on("dominance"):
        sections, primary, notes["dominance"] = _dominance(ctx, sections)
    chunks["gated"] = len(sections)
    sections = by_continuity(sections, primary)
    if on("expansion") and s.expansion_seeds > 0:
        sections = _expand(ctx, answer, sections, primary)
    chunks["expanded"] = len(sections)
    if on("diversity"):
        before, sections = sections, diversify(sections, s.per_document, s.diversity_drop)
        notes["diversity_deferred"] = deferred_by_diversity(before, sections, ask.k)
    if on("sparse_doc_recall"):
        sections = _inject(ctx, sections, answer.found.dense)
    answer.chosen, answer.primary = sections[: ask.k], primary
    chunks["selected"] = len(answer.chosen)
    return {**notes, "chunks": chunks}


def fetch_step(ctx: Context, answer: Answer) -> Notes | Stop:
    """The chosen sections' rows (read by id, ACL re-checked, one version per document) as hits, in rule 21's
    final order."""
    assert answer.found is not None
    rows = answer.rows
    rows.update(
        fetch_parents(
            ctx.reader, [x.parent_chunk_id for x in answer.chosen if x.parent_chunk_id not in rows], ctx.ask.access
        )
    )
    keep = one_version_per_document([rows[x.parent_chunk_id] for x in answer.chosen if x.parent_chunk_id in rows])
    text_of = {c.chunk_id: c.text for c in answer.found.candidates}
    pairs = []
    for seed in answer.chosen:
        if seed.parent_chunk_id in keep:
            child = text_of.get(seed.children[0], "") if seed.children else ""
            hit = make_hit(seed, rows[seed.parent_chunk_id], child, ctx.settings.low_relevance, ctx.ask.text)
            pairs.append((seed, hit))
    answer.pairs = final_order(pairs, answer.primary)
    if not answer.pairs:  # every chosen section was refused by the ACL re-check or replaced meanwhile: rare
        return Stop(BELOW_FLOORS, "no section could be read")
    return {}


def packing_step(ctx: Context, answer: Answer) -> Notes | None:
    """Rules 16 and 24 over the hits (each with its enclosing section's row, for a lone child's abstract)."""
    if not ctx.settings.enabled("packing"):
        return None
    assert answer.found is not None
    rows = answer.rows
    enclosing = enclosing_sections(ctx.reader, [rows[h.chunk_id] for h in answer.hits], ctx.ask.access)
    children = {c.chunk_id: c for c in answer.found.candidates}
    items = [
        PackItem(
            rank,
            rows[h.chunk_id],
            [ChildText(children[c].text, children[c].token_count) for c in h.matched_chunk_ids if c in children],
            enclosing.get(h.chunk_id),
            h.citation,
            subsection_citations(
                rows[h.chunk_id],
                [children[c].text for c in h.matched_chunk_ids if c in children],
                ctx.ask.text,
                h.citation,
            ),
        )
        for rank, h in enumerate(answer.hits, 1)
    ]
    served = {h.chunk_id for h in answer.hits}
    context = [
        ContextSection(n.expanded_from, rows[n.parent_chunk_id]) for n in answer.context if n.expanded_from in served
    ]
    answer.blocks, stats = pack(items, ctx.settings.token_budget, context)
    return {"pack": stats.counts(), "neighbours": neighbour_trace(answer.pairs, answer.context, stats)}


def account_step(ctx: Context, answer: Answer) -> Notes:
    """The confidence tier and reason (rule 4), the question's terms no hit holds, and the result's counts (rules
    2, 18, 25)."""
    s, hits, primary = ctx.settings, answer.hits, answer.primary
    tiers = conf.Tiers(s.confidence_high, s.confidence_direct, s.confidence_medium, s.confidence_low)
    answer.tier, answer.tier_reason = conf.tier(hits, matches(answer.pairs), tiers)
    if s.enabled("gaps"):
        answer.gaps = conf.gaps(ctx.ask.text, [" ".join([h.title, *h.breadcrumbs, h.text]) for h in hits])
    notes: Notes = {
        "chunks": {"returned": len(hits)},
        "injections": sum(h.recall_injected for h in hits),
        "expanded_sections": sum("expanded" in h.flags for h in hits),
        "result_documents": documents(hits),
        "primary_document": primary,
    }
    if not s.enabled("packing"):  # packing says which neighbours it packed; without it, none was
        notes["neighbours"] = neighbour_trace(answer.pairs, answer.context, None)
    return notes


# The pipeline, in order: (the name its time is reported under, the step).
STEPS: list[tuple[str, Step]] = [
    ("gate", gate_step),
    ("embed", embed_step),
    ("search", search_step),
    ("fusion", fusion_step),
    ("rerank", rerank_step),
    ("floors", floors_step),
    ("floors", nothing_kept),
    ("selection", selection_step),
    ("fetch", fetch_step),
    ("packing", packing_step),
    ("account", account_step),
]


def run(ctx: Context, steps: list[tuple[str, Step]] = STEPS) -> RetrievalResult:
    """The conductor: each step in order, timed, its notes gathered; the first Stop ends the answer, empty."""
    s = ctx.settings
    notes: Notes = {"steps_off": sorted(n for n in s.steps if not s.enabled(n)), "rerank_used": False, "rerank_ms": 0.0}
    answer = Answer()
    started = mark = time.perf_counter()
    timings: dict[str, float] = {}
    stopped: Stop | None = None
    for name, step in steps:
        outcome = step(ctx, answer)
        now = time.perf_counter()
        if outcome is not None:
            timings[name] = round(timings.get(name, 0.0) + (now - mark) * 1000, 2)
        mark = now
        if isinstance(outcome, Stop):
            stopped, outcome = outcome, outcome.notes
        for key, value in (outcome or {}).items():
            notes[key] = {**notes.get(key, {}), **value} if key == "chunks" else value
        if stopped is not None:
            break
    notes["timings_ms"] = {**timings, "total": round((time.perf_counter() - started) * 1000, 2)}
    diagnostics: Diagnostics = notes  # type: ignore[assignment]  # every key is one Diagnostics names
    if stopped is not None:
        return _empty(ctx.ask, diagnostics, stopped)
    return RetrievalResult(
        ctx.ask.text, answer.hits, answer.blocks, "ok", "", answer.tier, answer.tier_reason, answer.gaps, diagnostics
    )


def _empty(ask: Ask, diagnostics: Diagnostics, stop: Stop) -> RetrievalResult:
    """An empty result that says why (query/empty.py): guidance for a vague question, else no_results."""
    weak = diagnostics.get("weak_hits") or []
    best = max((w["score"] for w in weak), default=None) if stop.why == BELOW_FLOORS else None
    return RetrievalResult(
        ask.text,
        [],
        status="guidance" if stop.why == TOO_VAGUE else "no_results",
        message=message(stop.why, ask.principal, ask.scope, best, stop.example),
        confidence=conf.SPECULATIVE,
        confidence_reason=stop.said,
        diagnostics=diagnostics,
        empty_reason=stop.why,
    )


# ---- the parts of selection ------------------------------------------------------------------------------
def _dominance(ctx: Context, sections: list[Seed]) -> tuple[list[Seed], str | None, DominanceTrace]:
    """Rule 20: without a doc_tag, a dominant document gates the answer to itself; with one, not run."""
    s = ctx.settings
    if ctx.ask.scoped:
        return sections, None, {"note": "not run: the question is scoped to one document family (doc_tag)"}
    verdict = dominance(sections, ctx.ask.k, s.dominance_share)
    kept, gated_out = keep_primary(sections, verdict.primary) if s.dominance_gate else (sections, 0)
    trace: DominanceTrace = {
        "score": verdict.score,
        "document": verdict.document,
        "documents": verdict.documents,
        "primary": verdict.primary,
        "gated_out": gated_out,
        "note": verdict.note(s.dominance_share, s.dominance_gate),
    }
    return kept, verdict.primary, trace


def _expand(ctx: Context, answer: Answer, sections: list[Seed], primary: str | None) -> list[Seed]:
    """Rule 23: the first N seeds' neighbours, down-weighted; those under the floors (when they guard the
    citations) are not added. The parent rows read on the way stay on the answer (fetch reuses them)."""
    s, access = ctx.settings, ctx.ask.access
    first = sections[: s.expansion_seeds]
    rows = fetch_parents(ctx.reader, [x.parent_chunk_id for x in first], access)
    adjacent = neighbours(
        ctx.reader, [rows[x.parent_chunk_id] for x in first if x.parent_chunk_id in rows], primary, access
    )
    grown, _ = expand(sections, adjacent, Expansion(s.expansion_seeds, s.expansion_weight))
    grown, answer.context = served_and_context(grown, ctx.guards_citations())  # rule 10: context, never cited
    answer.rows.update(rows)
    answer.rows.update({r.chunk_id: r for found in adjacent.values() for r in found})
    return by_continuity(grown, primary)


def _inject(ctx: Context, ordered: list[Seed], dense: list[Candidate]) -> list[Seed]:
    """Rules 1-2, where nothing after can undo it: after the gate, the order and the caps, before the cut."""
    s, k = ctx.settings, ctx.ask.k
    limits = SparseDocLimits(
        s.sparse_doc_max_chunks, s.sparse_doc_max_distance, s.sparse_doc_max_injections, s.sparse_doc_top
    )
    window = sorted((c for c in dense if c.distance is not None), key=lambda c: (c.distance, c.chunk_id))
    window = window[: limits.window(k)]
    close = {c.document_id for c in window if c.distance is not None and c.distance <= limits.max_distance}
    candidates = close - {x.document_id for x in ordered[:k]}
    if not candidates:
        return ordered
    counts = children_per_document(ctx.reader, candidates, window, ctx.ask.access)
    guard = ctx.floors.admits if ctx.guards_citations() else (lambda c: True)
    ordered, _ = sparse_doc_recall(ordered, window, counts, k, limits, guard)
    return ordered
