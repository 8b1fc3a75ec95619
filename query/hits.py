"""From chosen seeds and their rows to what a caller gets: the hits (cited, with their labels), the matches the
confidence reads, the weak sections the floors kept out (listed apart), and rule 25's document distribution."""

from __future__ import annotations

from cairn.query.citations import citation, deep_link, labels
from cairn.query.confidence import Match
from cairn.query.selection import Seed, order_key
from cairn.query.types import Candidate, Hit, WeakHit
from cairn.schemas import from_epoch
from cairn.schemas.rows import ChunkRow


def make_hit(seed: Seed, row: ChunkRow, child_text: str, low_relevance: float, query: str = "") -> Hit:
    """The hit of a chosen section: its row's text and metadata, the seed's scores, and a citation whose labels
    go down to the heading the best child sits under (rule 22). The seed learns its labels (rule 21's last key)."""
    updated = from_epoch(row.updated_at)
    where = labels(row.title, list(row.breadcrumbs), row.text, child_text, query)
    seed.labels, seed.place = len(where), where[-1]
    return Hit(
        chunk_id=row.chunk_id,
        document_id=row.document_id,
        section_id=row.section_id,
        breadcrumbs=list(row.breadcrumbs),
        title=row.title,
        source_uri=row.source_uri,
        score=round(seed.combined, 6),
        text=row.text,
        citation=citation(row, where),
        version_hash=row.version_hash,
        updated_at=updated.isoformat() if updated else None,
        doc_tag=row.doc_tag,
        deep_link=deep_link(row),
        locator=row.locator,
        fused=round(seed.fused, 6),
        vector_score=round(seed.vector, 6),
        keyword_score=round(seed.keyword_norm, 6),
        low_relevance=seed.combined < low_relevance,
        recall_injected=seed.recall_injected,
        reason=seed.reason,
        flags=list(dict.fromkeys(seed.flags)),
        matched_chunk_ids=seed.children,
        distance=round(seed.distance, 6) if seed.distance is not None else None,
        tenant=row.tenant_id,
    )


def final_order(pairs: list[tuple[Seed, Hit]], primary: str | None) -> list[tuple[Seed, Hit]]:
    """Rule 21 on the result: primary document first, fused score, then the number of citation labels (the
    hit's, which may name a heading inside its section: make_hit set them)."""
    key = order_key(primary)
    return sorted(pairs, key=lambda pair: key(pair[0]))


def matches(pairs: list[tuple[Seed, Hit]]) -> list[Match]:
    """Rule 4's evidence: each matched chunk of a ranked hit, where it is (its citation's last label); neighbours
    (no chunk of their own) and injected sections (not ranked) give none."""
    found = []
    for seed, hit in pairs:
        if seed.recall_injected or seed.expanded_from:
            continue
        found += [Match(score, seed.place or hit.title) for score in seed.child_scores]
    return found


def weak_hits(weak: list[Candidate], kept: list[Candidate], k: int) -> list[WeakHit]:
    """The sections the floors kept out (none of whose children passed), best first, at most k: for diagnostics,
    apart from the hits."""
    listed: dict[str, WeakHit] = {}
    passed = {c.parent_chunk_id for c in kept}
    for c in sorted(weak, key=lambda c: (-c.combined, c.chunk_id)):
        if c.parent_chunk_id not in listed and c.parent_chunk_id not in passed and len(listed) < k:
            listed[c.parent_chunk_id] = WeakHit(
                chunk_id=c.parent_chunk_id,
                document_id=c.document_id,
                section_id=c.section_id,
                title=c.title,
                score=round(c.combined, 4),
                vector_score=round(c.vector, 4),
            )
    return list(listed.values())


def documents(hits: list[Hit]) -> dict[str, int]:
    """Rule 25's per-query document distribution: sections per document, in the result's order."""
    counts: dict[str, int] = {}
    for hit in hits:
        counts[hit.document_id] = counts.get(hit.document_id, 0) + 1
    return counts
