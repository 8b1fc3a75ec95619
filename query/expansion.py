"""Rule 23: 1-hop neighbour expansion of the first N seeds. A seed's previous and next sections (same document
version, read by query/parents.py) join the ranking with a down-weighted score, `expansion_weight` x the
seed's, so that a neighbour never outranks its seed; when a document dominates, the seeds (hence their
neighbours) are all of it (the gate ran first). Pure functions; the retriever reads the rows.

Rule 10 guards everything served: a neighbour has no evidence of its own (had one of its passages passed the
floors, it would be a seed already), so when the floors guard the citations a neighbour is never a hit nor a
citation; it may be packed as context of its seed's block (query/packing.py), and the diagnostics say which
(`neighbours`: served as hits, packed as context, left out)."""

from __future__ import annotations

from dataclasses import dataclass

from cairn.query.citations import trail
from cairn.query.packing import PackStats
from cairn.query.selection import Seed
from cairn.query.types import Hit, NeighbourTrace
from cairn.schemas.rows import ChunkRow


@dataclass(frozen=True)
class Expansion:
    """[query] expansion_seeds and expansion_weight."""

    seeds: int = 3  # the first N seeds (rule 21's order) whose neighbours are added
    weight: float = 0.5  # a neighbour scores this fraction of its seed (< 1: never above it)


def neighbour_seed(row: ChunkRow, seed: Seed, weight: float) -> Seed:
    """A neighbour section as a seed: the seed's scores down-weighted, no evidence of its own."""
    score = seed.fused * weight
    return Seed(
        row.chunk_id,
        row.document_id,
        row.section_order,
        score,
        seed.combined * weight,
        0.0,
        0.0,
        [],
        ["expanded"],
        False,
        f"neighbour of {seed.section_id or seed.parent_chunk_id}",
        labels=len(trail(row.title, list(row.breadcrumbs))),
        section_id=row.section_id,
        version=row.version,
        expanded_from=seed.parent_chunk_id,
    )


def expand(seeds: list[Seed], neighbours: dict[str, list[ChunkRow]], settings: Expansion) -> tuple[list[Seed], int]:
    """The seeds and, after each of the first `settings.seeds`, its neighbours not already among them, each
    scored `settings.weight` x its seed. `neighbours`: rows by the seed's parent chunk id. Returns (seeds with
    the neighbours, neighbours added); the caller re-sorts (a neighbour scores below its seed, so it lands
    after it)."""
    present = {s.parent_chunk_id for s in seeds}
    added: list[Seed] = []
    for seed in seeds[: settings.seeds]:
        for row in sorted(neighbours.get(seed.parent_chunk_id, []), key=lambda r: r.section_order):
            if row.chunk_id in present:
                continue
            present.add(row.chunk_id)
            added.append(neighbour_seed(row, seed, settings.weight))
    return seeds + added, len(added)


def served_and_context(grown: list[Seed], floors_guard: bool) -> tuple[list[Seed], list[Seed]]:
    """Rule 10 over expansion: (the sections that may be hits, the neighbours that may only be context). With the
    floors guarding the citations every neighbour is context (it is under them on its own evidence); without,
    neighbours rank as hits (0.5's behaviour, `floor_scope = "answer"` or the floors off)."""
    if not floors_guard:
        return grown, []
    return [s for s in grown if not s.expanded_from], [s for s in grown if s.expanded_from]


def neighbour_trace(pairs: list[tuple[Seed, Hit]], context: list[Seed], stats: PackStats | None) -> NeighbourTrace:
    """Which neighbours (by section id) were served as hits, packed as context of their seed's block, or left
    out: their seed not served, no room, or no packing (`stats` None)."""
    served = {seed.parent_chunk_id for seed, _ in pairs}
    left = set(stats.context_left_out) if stats is not None else {n.section_id for n in context}
    packed = [n.section_id for n in context if n.expanded_from in served and n.section_id not in left]
    return {
        "hits": [seed.section_id for seed, _ in pairs if seed.expanded_from],
        "context": packed,
        "left_out": [n.section_id for n in context if n.section_id not in packed],
    }
