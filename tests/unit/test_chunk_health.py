"""chunk_health_score: size x structure x abstract x children factors, each 1.0 when all is well."""

import pytest

from cairn.chunkers.health import chunk_health_score
from cairn.schemas.config import ChunkingConfig
from cairn.schemas.records import Chunk, QualityFlags, Section

CONFIG = ChunkingConfig()


def section(
    tokens: int = 650, abstract_tokens: int = 150, children=(150, 150, 150), merges: int = 0, splits: int = 0
) -> Section:
    return Section(
        section_id="s",
        breadcrumbs=["Doc"],
        section_level=1,
        section_order=0,
        parent_section_id="",
        text="x",
        token_count=tokens,
        abstract="a",
        abstract_token_count=abstract_tokens,
        chunks=[Chunk(order=i, text="c", token_count=n) for i, n in enumerate(children)],
        quality_flags=QualityFlags(merge_count=merges, split_count=splits),
    )


def test_a_section_meeting_every_target_scores_one():
    assert chunk_health_score(section(), CONFIG) == 1.0


def test_a_section_below_the_band_scores_its_share_of_the_minimum():
    assert chunk_health_score(section(tokens=200), CONFIG) == pytest.approx(200 / 400)


def test_a_section_above_the_band_scores_the_maximum_over_its_size():
    assert chunk_health_score(section(tokens=1800), CONFIG) == pytest.approx(900 / 1800)


def test_a_piece_of_a_split_section_loses_ten_percent():
    assert chunk_health_score(section(splits=2), CONFIG) == pytest.approx(0.9)


def test_merging_more_than_three_sections_loses_five_percent():
    assert chunk_health_score(section(merges=3), CONFIG) == 1.0
    assert chunk_health_score(section(merges=4), CONFIG) == pytest.approx(0.95)


def test_an_abstract_outside_its_band_loses_ten_percent():
    assert chunk_health_score(section(abstract_tokens=60), CONFIG) == pytest.approx(0.9)


def test_children_outside_their_band_lower_the_score_proportionally():
    assert chunk_health_score(section(children=(150, 150, 40, 250)), CONFIG) == pytest.approx(0.8 + 0.2 * 2 / 4)


def test_a_single_child_never_costs_anything():
    assert chunk_health_score(section(children=(650,)), CONFIG) == 1.0


def test_an_empty_section_scores_zero():
    assert chunk_health_score(section(tokens=0), CONFIG) == 0.0
