"""The steps over ranked children that decide which sections answer, in the order retrieve() runs them:
promotion to sections (one version per document), the dominant-document gate (rules 20-21), per-document
diversity (rule 12) and the short-document recall guarantee (rules 1-2). Pure functions; the retriever does
the I/O. Neighbour expansion (rule 23) is query/expansion.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from cairn.query.citations import trail
from cairn.query.types import Candidate


@dataclass
class Seed:
    """A parent section scored by its best child."""

    parent_chunk_id: str
    document_id: str
    section_order: int
    fused: float
    combined: float
    vector: float
    keyword_norm: float
    children: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    recall_injected: bool = False
    reason: str = ""
    labels: int = 1  # citation labels (title and headings): the last key of the order (rule 21)
    distance: float | None = None  # raw cosine distance of its closest chunk (dense leg), None if unscored
    child_scores: list[float] = field(default_factory=list)  # each child's combined score, as `children`
    section_id: str = ""
    version: tuple[int, int, str] = (0, 0, "")  # (updated_at, temporal_start, hash) of its version (rule 15)
    expanded_from: str = ""  # a neighbour added by expansion: the parent chunk id of the seed it neighbours
    place: str = ""  # its citation's last label, once cited (what a confidence reason names)


def seed_of(c: Candidate) -> Seed:
    """The section of a child, scored by that child."""
    return Seed(
        c.parent_chunk_id,
        c.document_id,
        c.section_order,
        c.fused,
        c.combined,
        c.vector,
        c.keyword_norm,
        [c.chunk_id],
        list(c.flags),
        c.recall_injected,
        c.reason,
        labels=len(trail(c.title, c.breadcrumbs)),
        distance=c.distance,
        child_scores=[c.combined],
        section_id=c.section_id,
        version=c.version,
    )


def promote(ranked: list[Candidate]) -> list[Seed]:
    """Children -> their parent sections; a section keeps its best child's scores and the rank order."""
    seeds: dict[str, Seed] = {}
    for c in ranked:
        seed = seeds.get(c.parent_chunk_id)
        if seed is None:
            seeds[c.parent_chunk_id] = seed_of(c)
        else:
            seed.children.append(c.chunk_id)
            seed.child_scores.append(c.combined)
            seed.combined = max(seed.combined, c.combined)
            seed.vector = max(seed.vector, c.vector)
            seed.keyword_norm = max(seed.keyword_norm, c.keyword_norm)
            if c.distance is not None and (seed.distance is None or c.distance < seed.distance):
                seed.distance = c.distance
    return list(seeds.values())


def newest_version(seeds: list[Seed]) -> tuple[list[Seed], int]:
    """Rule 15: of a document found in two versions (both briefly current while it is replaced, or two history
    versions), only the sections of the newest (updated_at, then version hash) stay. Returns (kept, dropped)."""
    newest: dict[str, tuple[int, int, str]] = {}
    for s in seeds:
        if s.document_id not in newest or s.version > newest[s.document_id]:
            newest[s.document_id] = s.version
    kept = [s for s in seeds if s.version == newest[s.document_id]]
    return kept, len(seeds) - len(kept)


@dataclass(frozen=True)
class Dominance:
    """Rule 20's verdict over the top-k seeds: the document holding the largest share of their fused score
    (the dominance score), and whether it dominates (`primary`)."""

    document: str | None  # the document with the largest share (None: no seeds)
    score: float  # its share of the top seeds' fused score, in [0, 1]
    sections: int  # its sections among the top seeds
    documents: int  # distinct documents among the top seeds
    primary: str | None  # `document` when it dominates, else None

    def note(self, share: float, gates: bool) -> str:
        """Rule 20's verdict in words (the diagnostics say when nothing dominates, and why)."""
        if self.primary:
            then = "the answer comes from it" if gates else "its sections come first"
            return f"document {self.primary} holds {self.score:.0%} of the top score: {then}"
        if self.document is None:
            return "no section to judge"
        if self.score >= share:
            return f"one section of document {self.document} leads alone: no main document, results from every document"
        return (
            f"no document holds {share:.0%} of the top score (the most {self.score:.0%}): results from "
            f"{self.documents} documents"
        )


def dominance(seeds: list[Seed], k: int, share: float) -> Dominance:
    """A document dominates when it holds at least `share` of the top-k seeds' fused score with two or more
    sections (one section is a best hit, not a main document)."""
    top = seeds[:k]
    total = sum(max(s.fused, 0.0) for s in top)
    per_doc: dict[str, float] = {}
    for s in top:
        per_doc[s.document_id] = per_doc.get(s.document_id, 0.0) + max(s.fused, 0.0)
    if not per_doc or total <= 0:
        return Dominance(None, 0.0, 0, len(per_doc), None)
    doc, score = max(per_doc.items(), key=lambda item: (item[1], item[0]))
    sections = sum(s.document_id == doc for s in top)
    dominates = score / total >= share and sections >= 2
    return Dominance(doc, round(score / total, 4), sections, len(per_doc), doc if dominates else None)


def dominant_document(seeds: list[Seed], k: int, share: float) -> str | None:
    """The document holding at least `share` of the top-k seeds' fused score, if one does."""
    return dominance(seeds, k, share).primary


def order_key(primary: str | None) -> Callable[[Seed], tuple[bool, float, int, str]]:
    """Rule 21: the primary document first, then the fused score, then the number of citation labels (the
    more precise heading path first), then the id (a total, deterministic order)."""
    return lambda s: (s.document_id != primary, -s.fused, -s.labels, s.parent_chunk_id)


def keep_primary(seeds: list[Seed], primary: str | None) -> tuple[list[Seed], int]:
    """Rule 20: when a document dominates, the answer comes from it: the other documents' seeds are dropped, but
    never the best-scoring section (#53: the gate once dropped the runbook itself, which held the best section
    and less of the top score). Returns (kept, dropped)."""
    if primary is None or not seeds:
        return seeds, 0
    best = max(seeds, key=lambda s: s.combined)
    ahead = best.combined > max((s.combined for s in seeds if s.document_id == primary), default=-1.0)  # ties: its
    kept = [s for s in seeds if s.document_id == primary or (ahead and s is best)]
    return kept, len(seeds) - len(kept)


@dataclass(frozen=True)
class Distribution:
    """Rule 25 on the top-k sections before the dominance gate (what the gate decides on, so that mixing shows):
    sections per document, the top document's share of their fused score (the dominance score), and the share
    of the sections that are the top document's (the primary-document fraction)."""

    documents: dict[str, int]
    dominance_score: float | None
    primary_doc_fraction: float | None


def distribution(seeds: list[Seed], k: int) -> Distribution:
    top = seeds[:k]
    counts: dict[str, int] = {}
    for s in top:
        counts[s.document_id] = counts.get(s.document_id, 0) + 1
    verdict = dominance(top, k, 1.0)
    if verdict.document is None:
        return Distribution(counts, None, None)
    return Distribution(counts, verdict.score, round(counts[verdict.document] / len(top), 4))


def by_continuity(seeds: list[Seed], primary: str | None) -> list[Seed]:
    """Seeds in rule 21's order: the primary document's first (its sections read in one run), by fused score."""
    return sorted(seeds, key=order_key(primary))


def diversify(seeds: list[Seed], per_document: int, drop: float) -> list[Seed]:
    """Rule 12: at most `per_document` sections of one document before the other documents are considered, and
    those its best (by combined score: #53, the order it comes in may be the fusion's or the reranker's),
    unless every other document's best remaining section scores more than `drop` below (then the document is
    simply the answer). Every seed stays, in the order given: the deferred ones come last, so that truncation
    takes them only when nothing else is left."""
    best: dict[str, list[str]] = {}  # each document's sections, best first
    for s in sorted(seeds, key=lambda s: (-s.combined, -s.fused, s.parent_chunk_id)):
        best.setdefault(s.document_id, []).append(s.parent_chunk_id)
    within = {pid for ids in best.values() for pid in ids[:per_document]}
    chosen: list[Seed] = []
    deferred: list[Seed] = []
    for i, seed in enumerate(seeds):
        if seed.parent_chunk_id in within:
            chosen.append(seed)
            continue
        others = [
            s.combined for s in seeds[i + 1 :] if s.parent_chunk_id in within and s.document_id != seed.document_id
        ]
        if not others or seed.combined - max(others) > drop:
            chosen.append(seed)
        else:
            deferred.append(seed)
    return chosen + deferred


def deferred_by_diversity(before: list[Seed], after: list[Seed], k: int) -> list[str]:
    """The sections diversity moved out of the top k (by section id, else parent chunk id): for the diagnostics."""
    top = {s.parent_chunk_id for s in after[:k]}
    return [s.section_id or s.parent_chunk_id for s in before[:k] if s.parent_chunk_id not in top]


@dataclass(frozen=True)
class SparseDocLimits:
    """When the sparse-document guarantee fires ([query] sparse_doc_*)."""

    max_chunks: int = 2  # a document this short or shorter
    max_distance: float = 0.20  # whose closest chunk is this close (raw cosine distance)
    max_injections: int = 1  # at most this many documents injected per query
    top: int = 20  # topN: the guarantee looks at the max(3 x k, top) closest chunks (rule 1's K)

    def window(self, k: int) -> int:
        """Rule 1's K = max(3 x limit, topN): how many chunks, by raw distance, the guarantee inspects."""
        return max(3 * k, self.top)


def sparse_doc_recall(
    ranked: list[Seed],
    dense: list[Candidate],
    chunk_counts: dict[str, int],
    k: int,
    limits: SparseDocLimits,
    admissible: Callable[[Candidate], bool] = lambda c: True,
) -> tuple[list[Seed], list[Seed]]:
    """Rules 1-2 (SD-MRG), applied to the final order (after the gate, the re-sort and the caps) just before it
    is cut to k, so nothing after it can push an injected section out. A short document (<= max_chunks
    children) loses every fusion to long ones that match with many chunks: if one of its chunks is among the K
    closest by raw distance (K = limits.window(k)), within max_distance, the document has no section in the
    top k, and the chunk is `admissible` (it passes the floors: the guarantee bypasses no other cap), its best
    chunk's section is injected, once per document and at most max_injections, at the last place of the top k
    (it counts toward k: it displaces the k-th).

    `dense`: the full-text leg's candidates (any order). Returns (new order, injected)."""
    present = {s.document_id for s in ranked[:k]}
    window = sorted((c for c in dense if c.distance is not None), key=lambda c: (c.distance, c.chunk_id))
    injected: list[Seed] = []
    for c in window[: limits.window(k)]:
        if len(injected) >= limits.max_injections:
            break
        if c.document_id in present or c.distance is None or c.distance > limits.max_distance:
            continue
        if chunk_counts.get(c.document_id, limits.max_chunks + 1) > limits.max_chunks or not admissible(c):
            continue
        seed = seed_of(c)  # its best chunk: the window is in distance order
        seed.flags.append("recall_injected")
        seed.recall_injected, seed.reason = True, "sparse_doc_recall"
        injected.append(seed)
        present.add(c.document_id)
    if not injected:
        return ranked, []
    ids = {i.parent_chunk_id for i in injected}
    kept = [s for s in ranked if s.parent_chunk_id not in ids]
    room = max(0, min(k, len(kept) + len(injected)) - len(injected))
    return kept[:room] + injected + kept[room:], injected
