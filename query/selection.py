"""Steps 5-8 over ranked children: promotion to sections, the sparse-document recall guarantee,
the dominant-document gate, and per-document diversity. Pure functions; the retriever does the I/O."""

from __future__ import annotations

from dataclasses import dataclass, field

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


def promote(ranked: list[Candidate]) -> list[Seed]:
    """Children -> their parent sections; a section keeps its best child's scores and the rank order."""
    seeds: dict[str, Seed] = {}
    for c in ranked:
        seed = seeds.get(c.parent_chunk_id)
        if seed is None:
            seeds[c.parent_chunk_id] = Seed(
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
            )
        else:
            seed.children.append(c.chunk_id)
            seed.combined = max(seed.combined, c.combined)
            seed.vector = max(seed.vector, c.vector)
            seed.keyword_norm = max(seed.keyword_norm, c.keyword_norm)
    return list(seeds.values())


@dataclass(frozen=True)
class SparseDocLimits:
    """When the sparse-document guarantee fires ([query] sparse_doc_*)."""

    max_chunks: int = 2  # a document this short or shorter
    max_distance: float = 0.20  # whose best chunk is this close (cosine distance)
    max_injections: int = 1  # at most this many documents injected per query


def sparse_doc_recall(
    selected: list[Seed], dense: list[Candidate], chunk_counts: dict[str, int], k: int, limits: SparseDocLimits
) -> tuple[list[Seed], list[Seed]]:
    """SD-MRG: a short document (<= max_chunks children) loses every fusion to long ones that match with many
    chunks. If its best chunk is among the dense candidates with cosine distance <= max_distance and the
    document is not selected, inject that chunk's section once (counting toward k; it displaces the last).

    `dense` is the full-text leg's candidates in raw distance order. Returns (new selection, injected)."""
    max_chunks, max_distance, max_injections = limits.max_chunks, limits.max_distance, limits.max_injections
    present = {s.document_id for s in selected[:k]}
    injected: list[Seed] = []
    for c in dense:
        if len(injected) >= max_injections:
            break
        if c.document_id in present or 1.0 - c.vector > max_distance:
            continue
        if chunk_counts.get(c.document_id, max_chunks + 1) > max_chunks:
            continue
        seed = Seed(
            c.parent_chunk_id,
            c.document_id,
            c.section_order,
            c.fused,
            c.combined,
            c.vector,
            c.keyword_norm,
            [c.chunk_id],
            ["recall_injected"],
            True,
            "sparse_doc_recall",
        )
        injected.append(seed)
        present.add(c.document_id)
    if not injected:
        return selected, []
    kept = [s for s in selected if s.parent_chunk_id not in {i.parent_chunk_id for i in injected}]
    room = max(0, k - len(injected))
    return kept[:room] + injected + kept[room:], injected


def dominant_document(seeds: list[Seed], k: int, share: float) -> str | None:
    """The document holding at least `share` of the top-k seeds' fused score, if one does."""
    top = seeds[:k]
    total = sum(s.fused for s in top)
    if total <= 0:
        return None
    per_doc: dict[str, float] = {}
    for s in top:
        per_doc[s.document_id] = per_doc.get(s.document_id, 0.0) + s.fused
    doc, score = max(per_doc.items(), key=lambda item: item[1])
    return doc if score / total >= share and sum(s.document_id == doc for s in top) >= 2 else None


def by_continuity(seeds: list[Seed], primary: str) -> list[Seed]:
    """Seeds of the primary document first (so its sections read in one run), each group by fused score."""
    return sorted(seeds, key=lambda s: (s.document_id != primary, -s.fused))


def diversify(seeds: list[Seed], k: int, per_document: int, drop: float) -> list[Seed]:
    """At most `per_document` sections of one document, unless every other document's best remaining
    section scores more than `drop` below it (then the dominant document is simply the answer)."""
    chosen: list[Seed] = []
    deferred: list[Seed] = []
    count: dict[str, int] = {}
    for i, seed in enumerate(seeds):
        if len(chosen) >= k:
            break
        if count.get(seed.document_id, 0) < per_document or seed.recall_injected:
            chosen.append(seed)
            count[seed.document_id] = count.get(seed.document_id, 0) + 1
            continue
        alternative = next((s.combined for s in seeds[i + 1 :] if count.get(s.document_id, 0) < per_document), None)
        if alternative is None or seed.combined - alternative > drop:
            chosen.append(seed)
            count[seed.document_id] += 1
        else:
            deferred.append(seed)
    for seed in deferred:  # only if there was not enough else to fill k
        if len(chosen) >= k:
            break
        chosen.append(seed)
    return chosen
