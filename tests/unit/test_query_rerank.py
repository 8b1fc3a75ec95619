"""Rule 11, the opportunistic rerank, on hand-made candidates and scores: when it runs (the band), what order it
leaves, and the 0.5 second pass's settings still loading as the rerank's."""

import numpy as np
import pytest

from cairn.embedding.reranker import capped_pair
from cairn.query.rerank import FLAG, in_band, model_inputs, passage, reorder
from cairn.query.types import Candidate
from cairn.schemas.config import ConfigError, QueryConfig, parse_config


def cand(cid: str, fused: float, title: str = "Title", breadcrumbs: tuple[str, ...] = ()) -> Candidate:
    c = Candidate(cid, f"p-{cid}", "d1", f"s-{cid}", 0, title, list(breadcrumbs), f"text of {cid}", 100)
    c.fused = c.combined = fused
    return c


def test_the_band_holds_its_low_end_and_not_its_high_end():
    assert in_band(0.45, (0.45, 0.60)) and in_band(0.59, (0.45, 0.60))
    assert not in_band(0.60, (0.45, 0.60))  # a confident top skips the reranker
    assert not in_band(0.449, (0.45, 0.60))  # so does one below the band


def test_the_model_order_replaces_the_fusion_order_and_the_fused_scores_follow_it():
    head = [cand("a", 0.58), cand("b", 0.50), cand("c", 0.40)]
    reordered = reorder(head, np.array([-2.0, 5.0, 1.0]))
    assert [c.chunk_id for c in reordered] == ["b", "c", "a"]
    # the scores the three had, handed out again best first: later steps see the new order on the old scale
    assert [c.fused for c in reordered] == [0.58, 0.50, 0.40]
    assert all(FLAG in c.flags for c in reordered)


def test_the_calibrated_combined_score_is_the_candidates_own_after_a_rerank():
    head = [cand("a", 0.58), cand("b", 0.50)]
    reordered = reorder(head, np.array([0.0, 1.0]))
    assert [(c.chunk_id, c.combined) for c in reordered] == [("b", 0.50), ("a", 0.58)]


def test_a_blend_weighs_the_model_against_the_fusion():
    def order(weight: float) -> list[str]:
        head = [cand("a", 0.60), cand("b", 0.55), cand("c", 0.30)]
        return [c.chunk_id for c in reorder(head, np.array([0.0, 0.2, 1.0]), weight)]

    assert order(1.0) == ["c", "b", "a"]  # the model alone
    assert order(0.0) == ["a", "b", "c"]  # the fusion alone
    # scaled over the three: a = 0.5 x 0 + 0.5 x 1 = 0.5, b = 0.5 x 0.2 + 0.5 x 0.83 = 0.52, c = 0.5 x 1 + 0 = 0.5
    assert order(0.5) == ["b", "a", "c"]  # a and c tie: the fusion's order decides


def test_equal_model_scores_keep_the_fusion_order():
    head = [cand("a", 0.6), cand("b", 0.5), cand("c", 0.4)]
    assert [c.chunk_id for c in reorder(head, np.array([1.0, 1.0, 1.0]))] == ["a", "b", "c"]


def test_the_model_reads_the_title_and_breadcrumbs_before_the_text():
    assert passage(cand("a", 0.5, "Ledger DB failover", ("Ledger DB failover", "Promote"))) == (
        "Ledger DB failover › Ledger DB failover › Promote\ntext of a"
    )
    assert passage(cand("a", 0.5, "")) == "text of a"


def test_the_second_pass_settings_of_0_5_load_as_the_rerank():
    q = parse_config(
        {"query": {"second_pass_band": [0.4, 0.55], "second_pass_top": 12, "steps": {"second_pass": True}}}
    ).query
    assert (q.rerank_band, q.rerank_top, q.enabled("rerank"), q.enabled("second_pass")) == ((0.4, 0.55), 12, True, True)
    assert "second_pass" not in q.steps


def test_an_old_name_beside_its_new_one_is_refused():
    with pytest.raises(ConfigError, match="second_pass_band is the old name of rerank_band"):
        parse_config({"query": {"second_pass_band": [0.4, 0.55], "rerank_band": [0.4, 0.5]}})
    with pytest.raises(ConfigError, match="steps.second_pass is the old name of steps.rerank"):
        parse_config({"query": {"steps": {"second_pass": True, "rerank": False}}})


def test_settings_copied_without_validation_still_read_the_old_step_name():
    copied = QueryConfig().model_copy(update={"steps": {"second_pass": True}})
    assert copied.enabled("rerank")


def test_the_model_is_given_the_top_n_candidates_passages_only():
    ranked = [cand(c, 0.9 - i / 10) for i, c in enumerate("abcdefg")]
    assert model_inputs(ranked, 5) == [f"Title\ntext of {c}" for c in "abcde"]
    assert model_inputs(ranked[:3], 5) == [f"Title\ntext of {c}" for c in "abc"]


def test_a_pair_is_cut_to_the_limit_the_passage_first():
    question, text = list(range(10)), list(range(100, 400))
    q, p = capped_pair(question, text, 64)
    assert q == question and p == text[:51]  # 64 - 3 special tokens - 10 question word pieces
    assert capped_pair(question, text[:20], 64) == (question, text[:20])  # short enough: nothing cut


def test_a_long_question_keeps_at_most_half_the_limit_beside_a_long_passage():
    q, p = capped_pair(list(range(200)), list(range(1000, 1300)), 128)
    assert len(q) + len(p) == 125 and len(p) == 62 and q == list(range(63))
    q, p = capped_pair(list(range(200)), list(range(1000, 1010)), 128)
    assert p == list(range(1000, 1010)) and len(q) == 115  # a short passage leaves the question the rest
