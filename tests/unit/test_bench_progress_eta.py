"""bench/progress_eta.py judge: a run's stamped progress lines against when its source was through."""

from __future__ import annotations

from bench.progress_eta import judge


def lines(*estimates: tuple[float, int]) -> list[tuple[float, str]]:
    out = [(2.0, "cairn: wiki: 0/600 documents to index")]
    for at, left in estimates:
        out.append((at, f"cairn: wiki: 100 of about 900 texts embedded (10.0/s, about {left} s left)"))
    out.append((102.0, "cairn: wiki: 600/600 documents (5.9/s)"))
    return out


def test_an_estimate_is_judged_by_the_finish_it_predicts_as_a_share_of_the_sources_time() -> None:
    # the source runs from 2 s to 102 s: 100 s; the estimate at 5 s falls in its first 10% and is not judged
    result = judge(lines((5.0, 500), (20.0, 70), (50.0, 62)))
    assert result["estimates"] == 3 and result["estimates_after_10pct"] == 2
    assert result["worst_error_of_whole"] == 0.12  # 20 + 70 = 90, 12 s early of 100
    assert result["worst_error_of_remaining"] == round(10 / 52, 3)  # 50 + 62 = 112: 10 s late of the 52 left
    assert result["within_goal"] and result["first_line_seconds"] == 2.0


def test_an_estimate_a_third_out_misses_the_goal_and_a_line_without_a_time_left_is_no_estimate() -> None:
    run = lines((30.0, 40))
    run.insert(1, (12.0, "cairn: wiki: 3 of about 900 texts embedded (0.5/s)"))
    result = judge(run)
    assert result["estimates"] == 1 and result["worst_error_of_whole"] == 0.32
    assert not result["within_goal"]
