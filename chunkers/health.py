"""Chunk health: one number per section saying how well it fits the chunking targets.

The data-quality report quotes `chunk_health_score`'s docstring as the definition, so the two must
not drift: change one, change the other.
"""

from __future__ import annotations

from cairn.schemas.config import ChunkingConfig
from cairn.schemas.records import Section

SPLIT_FACTOR = 0.9
MANY_MERGES = 3
MERGE_FACTOR = 0.95
ABSTRACT_FACTOR = 0.9
CHILD_FLOOR = 0.8


def chunk_health_score(section: Section, config: ChunkingConfig) -> float:
    """Health in [0, 1] of a section: the product of four factors, each 1.0 when all is well.

    size      1 if parent_min_tokens <= token_count <= parent_max_tokens;
              token_count / parent_min_tokens below the band; parent_max_tokens / token_count above.
    structure 0.9 if the section is a piece of a heading section split in several (split_count > 0),
              times 0.95 if more than 3 heading sections were merged into it (merge_count > 3).
    abstract  1 if abstract_min_tokens <= abstract_token_count <= abstract_max_tokens, else 0.9.
    children  1 if the section has a single child; otherwise 0.8 + 0.2 * (share of children with
              child_min_tokens <= token_count <= child_max_tokens).
    An empty section scores 0. Rounded to 4 decimals; a pure function of the section's measurements.
    """
    tokens = section.token_count
    if tokens <= 0:
        return 0.0
    if tokens < config.parent_min_tokens:
        size = tokens / config.parent_min_tokens
    elif tokens > config.parent_max_tokens:
        size = config.parent_max_tokens / tokens
    else:
        size = 1.0
    flags = section.quality_flags
    structure = SPLIT_FACTOR if flags.split_count > 0 else 1.0
    if flags.merge_count > MANY_MERGES:
        structure *= MERGE_FACTOR
    in_band = config.abstract_min_tokens <= section.abstract_token_count <= config.abstract_max_tokens
    abstract = 1.0 if in_band else ABSTRACT_FACTOR
    children = 1.0
    if len(section.chunks) > 1:
        fitting = sum(config.child_min_tokens <= c.token_count <= config.child_max_tokens for c in section.chunks)
        children = CHILD_FLOOR + (1.0 - CHILD_FLOOR) * fitting / len(section.chunks)
    return round(size * structure * abstract * children, 4)
