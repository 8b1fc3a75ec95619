"""Rules 16 and 24: the context blocks, within a token budget. The hits' sections are taken best first while they
fit; a section whose enclosing section (`parent_section_id`) is not packed with it brings that section's
abstract, its room reserved with it; then, per document in section order, adjacent sections under one parent
(siblings, or a section and its first child) are merged into one block (their order kept), and the blocks are
ordered front-and-back (the best at both ends of the context). A section too big for what is left gives its hit
child chunks and its own abstract."""

from __future__ import annotations

from dataclasses import dataclass, field

from cairn.query.citations import citation
from cairn.query.types import Block
from cairn.schemas.rows import ChunkRow


@dataclass(frozen=True)
class ChildText:
    """What packing reads of a hit child row: the fallback when its whole section does not fit."""

    text: str
    token_count: int


@dataclass
class PackItem:
    rank: int
    seed: ChunkRow  # the hit's section (parent) row
    children: list[ChildText] = field(default_factory=list)  # the hit child rows
    parent: ChunkRow | None = None  # the row of its enclosing section (parent_section_id), when it has one
    cited: str = ""  # the hit's citation ("" = the row's own)
    also_cited: list[str] = field(default_factory=list)  # the other subsections its matched children sit under

    @property
    def key(self) -> tuple[str, str]:
        return self.seed.document_id, self.seed.section_id

    @property
    def parent_key(self) -> tuple[str, str] | None:
        enclosing = self.seed.parent_section_id or ""
        return (self.seed.document_id, enclosing) if enclosing else None


@dataclass
class PackStats:
    """What packing did (rule 18's telemetry)."""

    sections: int = 0  # sections packed whole
    merges: int = 0  # sections joined to an adjacent one of the same parent in one block
    parent_abstracts: int = 0  # enclosing sections' abstracts brought by a lone child
    fallbacks: int = 0  # sections too big for what was left, packed as their hit children
    citations: int = 0  # citations the blocks carry
    context_sections: int = 0  # neighbours under the floors packed as context of their seed's block (rule 10)
    context_left_out: list[str] = field(default_factory=list)  # such neighbours not packed (no room, seed not whole)

    def counts(self) -> dict[str, int]:
        """Rule 18's telemetry, as the diagnostics' `pack` holds it."""
        return {
            "sections": self.sections,
            "merges": self.merges,
            "parent_abstracts": self.parent_abstracts,
            "fallbacks": self.fallbacks,
            "citations": self.citations,
            "context_sections": self.context_sections,
        }


def newest_per_section(rows: list[ChunkRow]) -> list[ChunkRow]:
    """One row per (document, section): the newest version (updated_at, then validity start) wins."""
    best: dict[tuple[str, str], ChunkRow] = {}
    for row in rows:
        key = (row.document_id, row.section_id)
        if key not in best or row.version > best[key].version:
            best[key] = row
    return list(best.values())


def _abstract(row: ChunkRow | None) -> tuple[str, int]:
    if row is None:
        return "", 0
    links = row.links
    return links.abstract, links.abstract_token_count or 0


@dataclass(frozen=True)
class ContextSection:
    """A section packed only as context of a hit's block, never cited (rule 10: a neighbour under the floors)."""

    of: str  # the chunk id of the hit section whose block it joins
    row: ChunkRow  # its own section row


def pack(
    items: list[PackItem], budget: int, context: list[ContextSection] | None = None
) -> tuple[list[Block], PackStats]:
    """The hits' blocks within `budget` tokens; then `context` sections (in the order given), each joining its
    hit's block on the side where it stands in the document, while room is left."""
    stats = PackStats()
    whole: dict[tuple[str, str], PackItem] = {}
    reserved: dict[tuple[str, str], tuple[str, int]] = {}  # enclosing section -> its abstract, room reserved
    fallbacks: list[Block] = []
    seen: set[tuple[str, str]] = set()
    remaining = budget
    for item in sorted(items, key=lambda i: i.rank):
        if item.key in seen:
            continue
        seen.add(item.key)
        parent_key = item.parent_key
        text, tokens = _abstract(item.parent)
        lone = parent_key is not None and parent_key not in whole and parent_key not in reserved and bool(text)
        cost = item.seed.token_count + (tokens if lone else 0)
        # the enclosing section of a section packed earlier: packed whole, its reserved abstract is not needed
        refund = reserved[item.key][1] if item.key in reserved else 0
        if cost <= remaining + refund:
            whole[item.key] = item
            remaining += refund - cost
            reserved.pop(item.key, None)
            if lone and parent_key is not None:
                reserved[parent_key] = (text, tokens)
            continue
        block = _children_block(item, remaining)
        if block is not None:
            remaining -= block.tokens
            stats.fallbacks += 1
            fallbacks.append(block)
    blocks = _merge(list(whole.values()), reserved, stats) + fallbacks
    _attach(blocks, list(whole.values()), context or [], remaining, stats)
    stats.sections = len(whole)
    stats.citations = sum(len(b.citations) for b in blocks)
    return front_and_back(blocks), stats


def _merge(packed: list[PackItem], reserved: dict[tuple[str, str], tuple[str, int]], stats: PackStats) -> list[Block]:
    """Per document in section order, runs of adjacent sections of one subtree (_one_subtree) as one block each; a
    run whose first section's parent is not packed opens with that parent's abstract (once per parent)."""
    runs: list[list[PackItem]] = []
    for item in sorted(packed, key=lambda i: (i.seed.document_id, i.seed.section_order)):
        last = runs[-1][-1] if runs else None
        if last is not None and _one_subtree(last.seed, item.seed):
            runs[-1].append(item)
        else:
            runs.append([item])
    blocks: list[Block] = []
    opened: set[tuple[str, str]] = set()
    for run in sorted(runs, key=lambda r: min(i.rank for i in r)):
        parts, context, tokens = [], [], 0
        parent_key = run[0].parent_key
        if parent_key in reserved and parent_key not in opened and parent_key is not None:
            text, abstract_tokens = reserved[parent_key]
            parts.append(text)
            context.append(parent_key[1])
            tokens += abstract_tokens
            opened.add(parent_key)
            stats.parent_abstracts += 1
        parts += [i.seed.text for i in run]
        tokens += sum(i.seed.token_count for i in run)
        stats.merges += len(run) - 1
        blocks.append(
            Block(
                run[0].seed.document_id,
                [i.seed.section_id for i in run],
                "\n\n".join(parts),
                tokens,
                [c for i in run for c in [i.cited or citation(i.seed), *i.also_cited]],
                min(i.rank for i in run),
                context,
            )
        )
    return blocks


def _attach(
    blocks: list[Block], packed: list[PackItem], context: list[ContextSection], room: int, stats: PackStats
) -> None:
    """Each context section into the block holding its hit, before or after the hit's text by section order,
    while it fits in `room`; one already packed (a hit itself, or another's context) is not repeated."""
    rows = {item.seed.chunk_id: item.seed for item in packed}
    present = {(b.document_id, section) for b in blocks for section in [*b.section_ids, *b.context_from]}
    for extra in context:
        row, hit = extra.row, rows.get(extra.of)
        key = (row.document_id, row.section_id)
        if key in present:
            continue
        block = None if hit is None else next((b for b in blocks if hit.section_id in b.section_ids), None)
        tokens = int(row.token_count)
        if hit is None or block is None or tokens > room:
            stats.context_left_out.append(row.section_id)
            continue
        before = int(row.section_order) < int(hit.section_order)
        block.text = f"{row.text}\n\n{block.text}" if before else f"{block.text}\n\n{row.text}"
        block.tokens += tokens
        block.context_from.append(row.section_id)
        room -= tokens
        present.add(key)
        stats.context_sections += 1


def _one_subtree(before: ChunkRow, after: ChunkRow) -> bool:
    """Adjacent sections (consecutive section_order) of one document version under one parent: siblings sharing
    `parent_section_id`, or a section followed by its own first child (the same heading's subtree)."""
    if before.document_id != after.document_id or before.version_hash != after.version_hash:
        return False
    if after.section_order != before.section_order + 1:
        return False
    enclosing = after.parent_section_id
    return enclosing in (before.parent_section_id, before.section_id)


def _children_block(item: PackItem, remaining: int) -> Block | None:
    """A section too big for what is left: its hit children, with the section's abstract for context."""
    abstract, abstract_tokens = _abstract(item.seed)
    parts: list[str] = []
    tokens = 0
    for child in item.children:
        if tokens + child.token_count <= remaining:
            parts.append(child.text)
            tokens += child.token_count
    if parts and abstract and tokens + abstract_tokens <= remaining:
        parts.append(f"Section summary: {abstract}")
        tokens += abstract_tokens
    if not parts:
        return None
    seed = item.seed
    return Block(
        seed.document_id,
        [seed.section_id],
        "\n\n".join(parts),
        tokens,
        [item.cited or citation(seed), *item.also_cited],
        item.rank,
    )


def front_and_back(blocks: list[Block]) -> list[Block]:
    """Ranks 1,3,5,... then ...,6,4,2: models read the start and end of a context best."""
    ordered = sorted(blocks, key=lambda b: b.rank)
    return ordered[0::2] + ordered[1::2][::-1]
