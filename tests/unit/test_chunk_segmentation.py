"""plan_segments: the band-packing dynamic programme shared by sections and children."""

from cairn.chunkers.segmentation import Band, plan_segments

BAND = Band(minimum=40, target=60, maximum=90)


def plan(sizes, cut_costs=None, keep_costs=None, glued=None):
    n = len(sizes)
    return plan_segments(
        sizes, BAND, cut_costs or [0.0] * n, keep_costs or [0.0] * n, glued or [False] * n, joiner_tokens=0
    )


def sizes_of(sizes, segments):
    return [sum(sizes[a:b]) for a, b in segments]


def test_segments_cover_every_item_once_in_order():
    segments = plan([10] * 23)
    assert segments[0][0] == 0 and segments[-1][1] == 23
    assert all(a < b for a, b in segments)
    assert all(prev[1] == nxt[0] for prev, nxt in zip(segments, segments[1:]))


def test_segments_land_inside_the_band_when_the_items_allow():
    sizes = [10, 25, 5, 30, 20, 15, 10, 35, 5, 20, 25]
    assert all(40 <= total <= 90 for total in sizes_of(sizes, plan(sizes)))


def test_cheap_cut_positions_are_preferred():
    sizes = [20] * 6
    assert plan(sizes, cut_costs=[4.0, 4.0, 0.0, 4.0, 4.0, 4.0]) == [(0, 2), (2, 6)]
    assert plan(sizes, cut_costs=[4.0, 4.0, 4.0, 0.0, 4.0, 4.0]) == [(0, 3), (3, 6)]


def test_a_glued_item_never_ends_a_segment():
    sizes = [30, 5, 30, 5, 30, 5, 30]
    glued = [False, True, False, True, False, True, False]
    for _, end in plan(sizes, glued=glued):
        assert not glued[end - 1] or end == len(sizes)


def test_an_item_larger_than_the_maximum_stands_alone():
    assert plan([30, 200, 30]) == [(0, 1), (1, 2), (2, 3)]


def test_a_glued_item_stays_with_an_oversized_item_after_it():
    assert plan([50, 3, 200], glued=[False, True, False]) == [(0, 1), (1, 3)]


def test_keep_costs_keep_in_band_neighbours_apart():
    assert plan([42, 42]) == [(0, 2)]  # one 84 is nearer the target than two 42s
    assert plan([42, 42], keep_costs=[0.0, 1.0]) == [(0, 1), (1, 2)]


def test_no_items_means_no_segments():
    assert plan([]) == []
