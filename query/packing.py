"""Step 9: context blocks within a token budget: adjacent sections of one document in document order,
newest version per section, and blocks ordered front-and-back (the best at both ends of the context)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from cairn.query.citations import citation
from cairn.query.types import Block, Row
from cairn.schemas.row_links import ParentLinks


class ChildText(TypedDict):
    """What packing reads of a hit child row: the fallback when its whole section does not fit."""

    text: str
    token_count: int


@dataclass
class PackItem:
    rank: int
    seed: Row  # the hit's parent row
    neighbours: list[Row] = field(default_factory=list)  # adjacent sections (expansion), any order
    children: list[ChildText] = field(default_factory=list)  # the hit child rows


def newest_per_section(rows: list[Row]) -> list[Row]:
    """One row per (document, section): the newest version wins."""
    best: dict[tuple[str, str], Row] = {}
    for row in rows:
        key = (row["document_id"], row["section_id"])
        if key not in best or (row["temporal_start"], row["version_hash"]) > (
            best[key]["temporal_start"],
            best[key]["version_hash"],
        ):
            best[key] = row
    return list(best.values())


def pack(items: list[PackItem], budget: int) -> list[Block]:
    blocks: list[Block] = []
    used: set[tuple[str, str]] = set()
    remaining = budget
    for item in sorted(items, key=lambda i: i.rank):
        seed = item.seed
        key = (seed["document_id"], seed["section_id"])
        if key in used:
            continue
        if seed["token_count"] <= remaining:
            rows = [seed]
            remaining -= seed["token_count"]
            used.add(key)
            # neighbours nearest the seed first, while they fit; then read in document order
            for row in sorted(item.neighbours, key=lambda r: abs(r["section_order"] - seed["section_order"])):
                nkey = (row["document_id"], row["section_id"])
                if nkey not in used and row["token_count"] <= remaining:
                    rows.append(row)
                    used.add(nkey)
                    remaining -= row["token_count"]
            rows.sort(key=lambda r: r["section_order"])
            blocks.append(
                Block(
                    seed["document_id"],
                    [r["section_id"] for r in rows],
                    "\n\n".join(r["text"] for r in rows),
                    sum(r["token_count"] for r in rows),
                    [citation(r) for r in rows],
                    item.rank,
                )
            )
            continue
        # The section is too big for what is left: its hit children, with the section's abstract for context.
        links = ParentLinks.from_row(seed)
        abstract, abstract_tokens = links.abstract, links.abstract_token_count or 0
        parts: list[str] = []
        tokens = 0
        for child in item.children:
            if tokens + child["token_count"] <= remaining:
                parts.append(child["text"])
                tokens += child["token_count"]
        if parts and abstract and tokens + abstract_tokens <= remaining:
            parts.append(f"Section summary: {abstract}")
            tokens += abstract_tokens
        if parts:
            remaining -= tokens
            used.add(key)
            blocks.append(
                Block(
                    seed["document_id"], [seed["section_id"]], "\n\n".join(parts), tokens, [citation(seed)], item.rank
                )
            )
    return front_and_back(blocks)


def front_and_back(blocks: list[Block]) -> list[Block]:
    """Ranks 1,3,5,... then ...,6,4,2: models read the start and end of a context best."""
    ordered = sorted(blocks, key=lambda b: b.rank)
    return ordered[0::2] + ordered[1::2][::-1]
