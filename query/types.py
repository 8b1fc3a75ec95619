"""The typed records the query module hands out and passes between its steps."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, TypedDict

from cairn.query.empty import QuestionScope
from cairn.schemas import Principal
from cairn.schemas.row_filter import RowFilter
from cairn.schemas.rows import version_order


@dataclass(frozen=True)
class Ask:
    """One question as retrieve() checked it: who asks, in what scope, and the filter of every search leg."""

    text: str
    principal: Principal
    k: int
    where: RowFilter  # the search legs' pre-filter: child rows the principal may read, in scope
    access: RowFilter  # what any row returned must pass (parents and children alike)
    scope: QuestionScope

    @property
    def scoped(self) -> bool:
        """Scoped to one document family (doc_tag): the caller named what the question is about."""
        return self.scope.doc_tag is not None


@dataclass
class Candidate:
    """A child row found by the search legs, with what each leg said about it."""

    chunk_id: str
    parent_chunk_id: str
    document_id: str
    section_id: str
    section_order: int
    title: str
    breadcrumbs: list[str]
    text: str
    token_count: int = 0
    vector: float = 0.0  # best cosine similarity over the dense legs and seeds
    keyword: float = 0.0  # BM25 score (positive, whatever sign the engine reports)
    keyword_norm: float = 0.0  # BM25 / the query's best BM25, in [0, 1]
    keyword_rank: int | None = None  # 1-based rank in the BM25 leg
    fused: float = 0.0  # what the ranking sorts on (RRF or the weighted sum)
    combined: float = 0.0  # calibrated weighted score in [0, 1]: what floors and tiers read
    flags: list[str] = field(default_factory=list)
    recall_injected: bool = False
    reason: str = ""
    distance: float | None = None  # raw cosine distance (1 - cosine of the encoder) from the full-text dense leg
    version_hash: str = ""
    updated_at: int = 0  # epoch seconds: of two versions of one document, the newer is kept (rule 15)
    temporal_start: int = 0

    @property
    def version(self) -> tuple[int, int, str]:
        """What orders two versions of its document: updated_at, then when it became valid, then the hash."""
        return version_order(self.updated_at, self.temporal_start, self.version_hash)


@dataclass
class Hit:
    """A parent section, ranked by its best-matching child chunks."""

    chunk_id: str  # the parent section's row
    document_id: str
    section_id: str
    breadcrumbs: list[str]
    title: str
    source_uri: str
    score: float  # calibrated combined score in [0, 1]
    text: str
    citation: str
    version_hash: str
    updated_at: str | None
    doc_tag: str
    deep_link: str = ""
    locator: str = ""  # path relative to its source root (what eval qrels may name)
    fused: float = 0.0
    vector_score: float = 0.0
    keyword_score: float = 0.0
    low_relevance: bool = False
    recall_injected: bool = False
    reason: str = ""
    flags: list[str] = field(default_factory=list)
    matched_chunk_ids: list[str] = field(default_factory=list)
    # raw cosine distance of the section's closest chunk (the dense leg's, before any calibration); what the
    # short-document guarantee judged an injected hit by (rule 2); None when no dense leg scored it
    distance: float | None = None
    tenant: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Block:
    """Packed context: adjacent sections of one document in document order, cited in that order."""

    document_id: str
    section_ids: list[str]
    text: str
    tokens: int
    citations: list[str]
    rank: int  # of the hit that seeded it (1 = best)
    # the enclosing sections (parent_section_id) whose abstract opens the block: a section packed without its
    # parent brings the parent's abstract (rule 16)
    context_from: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class FloorsTrace(TypedDict):
    dropped: int  # candidates the floors cut
    rescued: bool  # nothing passed, and one exact-term keyword match was kept
    notes: list[str]


class WeakHit(TypedDict):
    """A section kept out by the floors (rule 10): listed for diagnostics, never cited nor packed."""

    chunk_id: str  # the section's (parent) row
    document_id: str
    section_id: str
    title: str
    score: float  # its best child's combined score
    vector_score: float


class DominanceTrace(TypedDict, total=False):
    """Rule 20's verdict (absent keys: the step did not run)."""

    score: float  # the top document's share of the top-k seeds' fused score (the dominance score, rule 25)
    document: str | None  # that document
    documents: int  # distinct documents among the top-k seeds
    primary: str | None  # the document the answer was gated to, None when nothing dominates
    gated_out: int  # sections of other documents the gate dropped
    note: str  # what happened, in words (e.g. nothing dominates: results from several documents)


class NeighbourTrace(TypedDict):
    """Rule 23's neighbours by section id, as rule 10 let them through: hits (floors not guarding), context only
    (packed in their seed's block, never cited), left out."""

    hits: list[str]
    context: list[str]
    left_out: list[str]


class Diagnostics(TypedDict, total=False):
    """What one retrieval did, step by step (the `query` log record; `cairn query --explain`). A key is absent
    when the pipeline stopped before its step."""

    steps_off: list[str]
    gate: str  # the gate's reason
    transform: str  # what the transform hook added
    candidates: int
    vector_max: float
    keyword_max: float
    combined_top: float
    rerank_used: bool  # the top was borderline and the reranker reordered the top candidates (rule 11)
    rerank_ms: float  # the reranker's time (0.0 when it did not run)
    floors: FloorsTrace
    weak_hits: list[WeakHit]  # sections the floors kept out, best first (at most k)
    chunks: dict[str, int]  # rule 18: how many candidates each stage had, in pipeline order
    dedupe: dict[str, int]  # rule 18: dropped as the same section ("same_section") or an older version
    dominance: DominanceTrace
    injections: int  # sections the sparse-document guarantee injected that are in the result
    primary_document: str | None
    # rule 25, on the top-k sections before the dominance gate (#53: after it, the fraction was 1.0 or None)
    primary_doc_fraction: float | None  # share of those sections from the document with the most of their score
    documents: dict[str, int]  # sections per document among them
    dominance_score: float | None  # that document's share of their fused score
    result_documents: dict[str, int]  # sections per document in the result
    diversity_deferred: list[str]  # sections rule 12 moved out of the top k (a document's third and later)
    expanded_sections: int  # neighbour sections (rule 23) in the result
    neighbours: NeighbourTrace  # rule 23's neighbours: served as hits, packed as context only, left out (rule 10)
    pack: dict[str, int]  # rule 18: sections packed, merges, parent abstracts, fallbacks, citations added
    timings_ms: dict[str, float]  # per stage, and "total"
    cache: str  # "hit" when answered from the cache


@dataclass
class RetrievalResult:
    query: str
    hits: list[Hit]
    blocks: list[Block] = field(default_factory=list)
    status: str = "ok"  # ok | guidance (query too vague) | no_results (nothing relevant enough)
    message: str = ""  # the guidance or no-results text for the caller to show
    confidence: str = "SPECULATIVE"  # HIGH | MEDIUM | LOW | SPECULATIVE
    confidence_reason: str = ""
    gaps: list[str] = field(default_factory=list)  # requested terms no retrieved text contains
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
    # why there are no hits (query/empty.py): too_vague | no_access | out_of_scope | below_floors; "" with hits
    empty_reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "status": self.status,
            "message": self.message,
            "confidence": self.confidence,
            "confidence_reason": self.confidence_reason,
            "gaps": self.gaps,
            "results": [h.to_dict() for h in self.hits],
            "blocks": [b.to_dict() for b in self.blocks],
            "diagnostics": self.diagnostics,
            "empty_reason": self.empty_reason,
        }
