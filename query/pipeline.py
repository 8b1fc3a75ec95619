"""retrieve()'s steps after the floors, in order: sections (promotion, one version per document), the dominance
gate (rule 20) and rule 21's order, neighbour expansion (rule 23), diversity (rule 12), the short-document
guarantee (rules 1-2) just before the cut to k, then the hits (parents read by id, ACL re-checked), packing
(rules 16, 24), confidence (rule 4) and rule 18 and 25's counts. Each step's counts go to the trace."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from cairn.index.milvus import CollectionReader
from cairn.query import confidence as conf
from cairn.query.citations import subsection_citations
from cairn.query.empty import Scope
from cairn.query.expansion import Expansion, expand, neighbour_trace, served_and_context
from cairn.query.filters import Access
from cairn.query.floors import Floors
from cairn.query.hits import documents, final_order, make_hit, matches
from cairn.query.packing import ChildText, ContextSection, PackItem, PackStats, pack
from cairn.query.parents import (
    children_per_document,
    enclosing_sections,
    fetch_parents,
    neighbours,
    one_version_per_document,
)
from cairn.query.search import Found
from cairn.query.selection import (
    Dominance,
    Seed,
    SparseDocLimits,
    by_continuity,
    deferred_by_diversity,
    distribution,
    diversify,
    dominance,
    gate,
    newest_version,
    promote,
    sparse_doc_recall,
)
from cairn.query.types import Block, Candidate, Diagnostics, DominanceTrace, Hit, Row
from cairn.schemas import Principal
from cairn.schemas.config import QueryConfig


@dataclass(frozen=True)
class Ask:
    """One question as retrieve() checked it: who asks, in what scope, and the filter of every search leg."""

    text: str
    principal: Principal
    k: int
    expr: str
    access: Access
    scope: Scope

    @property
    def scoped(self) -> bool:
        """Scoped to one document family (doc_tag): the caller named what the question is about."""
        return self.scope.doc_tag is not None


@dataclass
class Steps:
    """What the steps after the floors read: the reader, the settings, the question, the floors, the trace."""

    reader: CollectionReader
    settings: QueryConfig
    ask: Ask
    floors: Floors
    trace: Diagnostics
    context: list[Seed] = field(default_factory=list)  # neighbours under the floors: context only (rule 10)

    def guarded(self) -> Callable[[Candidate], bool]:
        """What a candidate added after the floors must pass: the floors, when they guard the citations."""
        s = self.settings
        if s.enabled("floors") and s.floor_scope == "candidate":
            return self.floors.admits
        return lambda c: True

    # ---- selection ------------------------------------------------------------------------------------
    def select(self, kept: list[Candidate], found: Found) -> tuple[list[Seed], dict[str, Row], str | None]:
        """The sections that answer, in order, cut to k; the parent rows read on the way; the primary document."""
        on, ask, trace = self.settings.enabled, self.ask, self.trace
        promoted = promote(kept)
        sections, older = newest_version(promoted)
        trace["dedupe"] = {"same_section": len(kept) - len(promoted), "older_version": older}
        chunks = trace.setdefault("chunks", {})
        chunks["sections"] = len(sections)
        primary = None
        self.measure(sections)
        if on("dominance"):
            sections, primary = self.dominance(sections)
        chunks["gated"] = len(sections)
        sections = by_continuity(sections, primary)
        rows: dict[str, Row] = {}
        if on("expansion") and self.settings.expansion_seeds > 0:
            sections, rows = self.expand(sections, primary)
        chunks["expanded"] = len(sections)
        if on("diversity"):
            before, sections = sections, diversify(sections, self.settings.per_document, self.settings.diversity_drop)
            trace["diversity_deferred"] = deferred_by_diversity(before, sections, ask.k)
        if on("sparse_doc_recall"):
            sections = self.inject(sections, found.dense)
        chosen = sections[: ask.k]
        chunks["selected"] = len(chosen)
        return chosen, rows, primary

    def measure(self, sections: list[Seed]) -> None:
        """Rule 25 on the top-k sections before the dominance gate, where mixing can still show."""
        spread = distribution(by_continuity(sections, None), self.ask.k)
        self.trace["documents"] = spread.documents
        self.trace["dominance_score"] = spread.dominance_score
        self.trace["primary_doc_fraction"] = spread.primary_doc_fraction

    def dominance(self, sections: list[Seed]) -> tuple[list[Seed], str | None]:
        """Rule 20: without a doc_tag, a dominant document gates the answer to itself; with one, not run."""
        if self.ask.scoped:
            self.trace["dominance"] = {"note": "not run: the question is scoped to one document family (doc_tag)"}
            return sections, None
        verdict = dominance(sections, self.ask.k, self.settings.dominance_share)
        kept, gated_out = gate(sections, verdict.primary) if self.settings.dominance_gate else (sections, 0)
        note = _dominance_note(verdict, self.settings.dominance_share, self.settings.dominance_gate)
        trace: DominanceTrace = {
            "score": verdict.score,
            "document": verdict.document,
            "documents": verdict.documents,
            "primary": verdict.primary,
            "gated_out": gated_out,
            "note": note,
        }
        self.trace["dominance"] = trace
        return kept, verdict.primary

    def expand(self, sections: list[Seed], primary: str | None) -> tuple[list[Seed], dict[str, Row]]:
        """Rule 23: the first N seeds' neighbours, down-weighted; those under the floors (when they guard the
        citations) are not added."""
        s, access = self.settings, self.ask.access
        first = sections[: s.expansion_seeds]
        rows = fetch_parents(self.reader, [x.parent_chunk_id for x in first], access)
        adjacent = neighbours(
            self.reader, [rows[x.parent_chunk_id] for x in first if x.parent_chunk_id in rows], primary, access
        )
        grown, _ = expand(sections, adjacent, Expansion(s.expansion_seeds, s.expansion_weight))
        grown, self.context = served_and_context(grown, s.enabled("floors") and s.floor_scope == "candidate")
        rows.update({r["chunk_id"]: r for found in adjacent.values() for r in found})
        return by_continuity(grown, primary), rows

    def inject(self, ordered: list[Seed], dense: list[Candidate]) -> list[Seed]:
        """Rules 1-2, where nothing after can undo it: after the gate, the order and the caps, before the cut."""
        s, k = self.settings, self.ask.k
        limits = SparseDocLimits(
            s.sparse_doc_max_chunks, s.sparse_doc_max_distance, s.sparse_doc_max_injections, s.sparse_doc_top
        )
        window = sorted((c for c in dense if c.distance is not None), key=lambda c: (c.distance, c.chunk_id))
        window = window[: limits.window(k)]
        close = {c.document_id for c in window if c.distance is not None and c.distance <= limits.max_distance}
        candidates = close - {x.document_id for x in ordered[:k]}
        if not candidates:
            return ordered
        counts = children_per_document(self.reader, candidates, window, self.ask.access)
        ordered, _ = sparse_doc_recall(ordered, window, counts, k, limits, self.guarded())
        return ordered

    # ---- the answer -----------------------------------------------------------------------------------
    def hits(
        self, chosen: list[Seed], rows: dict[str, Row], primary: str | None, found: Found
    ) -> list[tuple[Seed, Hit]]:
        """The chosen sections' rows (read by id, ACL re-checked, one version per document) as hits, in rule
        21's final order."""
        missing = [x.parent_chunk_id for x in chosen if x.parent_chunk_id not in rows]
        rows.update(fetch_parents(self.reader, missing, self.ask.access))
        present = [rows[x.parent_chunk_id] for x in chosen if x.parent_chunk_id in rows]
        keep = one_version_per_document(present)
        text_of = {c.chunk_id: c.text for c in found.candidates}
        pairs = []
        for seed in chosen:
            if seed.parent_chunk_id in keep:
                child = text_of.get(seed.children[0], "") if seed.children else ""
                hit = make_hit(seed, rows[seed.parent_chunk_id], child, self.settings.low_relevance, self.ask.text)
                pairs.append((seed, hit))
        return final_order(pairs, primary)

    def pack(self, pairs: list[tuple[Seed, Hit]], rows: dict[str, Row], found: Found) -> list[Block]:
        """Rules 16 and 24 over the hits (each with its enclosing section's row, for a lone child's abstract)."""
        section_rows = [rows[h.chunk_id] for _, h in pairs]
        enclosing = enclosing_sections(self.reader, section_rows, self.ask.access)
        child_rows = {c.chunk_id: c for c in found.candidates}
        items = [
            PackItem(
                rank,
                rows[h.chunk_id],
                [
                    ChildText(text=child_rows[c].text, token_count=child_rows[c].token_count)
                    for c in h.matched_chunk_ids
                    if c in child_rows
                ],
                enclosing.get(h.chunk_id),
                h.citation,
                subsection_citations(
                    rows[h.chunk_id],
                    [child_rows[c].text for c in h.matched_chunk_ids if c in child_rows],
                    self.ask.text,
                    h.citation,
                ),
            )
            for rank, (_, h) in enumerate(pairs, 1)
        ]
        served = {h.chunk_id for _, h in pairs}
        context = [
            ContextSection(n.expanded_from, rows[n.parent_chunk_id]) for n in self.context if n.expanded_from in served
        ]
        blocks, stats = pack(items, self.settings.token_budget, context)
        self.trace["pack"] = _pack_counts(stats)
        self.trace["neighbours"] = neighbour_trace(pairs, self.context, stats)
        return blocks

    def account(self, pairs: list[tuple[Seed, Hit]], primary: str | None) -> tuple[str, str]:
        """The confidence tier and reason (rule 4), and the result's counts in the trace (rules 2, 18, 25)."""
        hits = [h for _, h in pairs]
        trace, s = self.trace, self.settings
        trace.setdefault("chunks", {})["returned"] = len(hits)
        trace["injections"] = sum(h.recall_injected for h in hits)
        trace["expanded_sections"] = sum("expanded" in h.flags for h in hits)
        trace.setdefault("neighbours", neighbour_trace(pairs, self.context, None))  # packing off: none packed
        trace["result_documents"] = documents(hits)
        trace["primary_document"] = primary
        tiers = conf.Tiers(s.confidence_high, s.confidence_direct, s.confidence_medium, s.confidence_low)
        return conf.tier(hits, matches(pairs), tiers)


def _dominance_note(verdict: Dominance, share: float, gates: bool) -> str:
    """Rule 20's verdict in words (the diagnostics say when nothing dominates, and why)."""
    if verdict.primary:
        then = "the answer comes from it" if gates else "its sections come first"
        return f"document {verdict.primary} holds {verdict.score:.0%} of the top score: {then}"
    if verdict.document is None:
        return "no section to judge"
    if verdict.score >= share:
        return f"one section of document {verdict.document} leads alone: no main document, results from every document"
    return (
        f"no document holds {share:.0%} of the top score (the most {verdict.score:.0%}): results from "
        f"{verdict.documents} documents"
    )


def _pack_counts(stats: PackStats) -> dict[str, int]:
    return {
        "sections": stats.sections,
        "merges": stats.merges,
        "parent_abstracts": stats.parent_abstracts,
        "fallbacks": stats.fallbacks,
        "citations": stats.citations,
        "context_sections": stats.context_sections,
    }
