"""Fusion (rule 8) and the floors (rules 10, 13) on hand-made candidates; what follows them (sections, the gate,
expansion, diversity, the short-document guarantee) is tests/unit/test_query_selection.py."""

from dataclasses import replace

import pytest

from cairn.query.floors import Floors, apply_floors, passes
from cairn.query.fusion import fuse, leg_weights, rrf
from cairn.query.types import Candidate
from cairn.schemas.config import QueryConfig


def cand(cid, doc="d1", parent=None, vector=0.0, keyword=0.0, rank=None, order=0, text="", fused=0.0, combined=0.0):
    c = Candidate(
        cid,
        parent or f"p-{cid}",
        doc,
        f"s-{cid}",
        order,
        "Title",
        ["Title"],
        text,
        100,
        vector=vector,
        keyword=keyword,
        keyword_rank=rank,
    )
    c.fused, c.combined = fused, combined
    return c


# ---- 3. fusion ----------------------------------------------------------------------------------
def test_rrf_rewards_agreement_between_lists():
    scores = rrf([["a", "b"], ["b", "c"]], 60)
    assert scores["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["b"] > scores["a"] > scores["c"]


def test_keyword_scores_are_normalised_by_the_best_and_combined_is_calibrated():
    a, b = cand("a", vector=0.8, keyword=10.0, rank=1), cand("b", vector=0.2, keyword=5.0, rank=2)
    ranked = fuse([b, a], [["a", "b"]], "weighted", 60, 0.65, 0.35)
    assert [c.chunk_id for c in ranked] == ["a", "b"]
    assert (a.keyword_norm, b.keyword_norm) == (1.0, 0.5)
    assert a.combined == pytest.approx(0.65 * 0.8 + 0.35)
    assert b.combined == pytest.approx(0.65 * 0.2 + 0.35 * 0.5)


def test_rrf_mode_ranks_by_rank_but_keeps_the_calibrated_score():
    a, b = cand("a", vector=0.9), cand("b", vector=0.1, keyword=3.0, rank=1)
    ranked = fuse([a, b], [["b", "a"], ["b"]], "rrf", 60, 0.65, 0.35)
    assert ranked[0].chunk_id == "b" and ranked[0].combined < a.combined


def test_a_question_scoped_to_one_document_weighs_bm25_more_and_a_leg_alone_weighs_one():
    settings = QueryConfig(
        vector_weight=0.85, keyword_weight=0.15, vector_weight_scoped=0.75, keyword_weight_scoped=0.25
    )
    assert leg_weights(settings, scoped=False, dense_on=True, keyword_on=True) == (0.85, 0.15)
    assert leg_weights(settings, scoped=True, dense_on=True, keyword_on=True) == (0.75, 0.25)
    for scoped in (False, True):
        assert leg_weights(settings, scoped, dense_on=True, keyword_on=False) == (1.0, 0.0)
        assert leg_weights(settings, scoped, dense_on=False, keyword_on=True) == (0.0, 1.0)
    # the same two sections of one contract: the clause that names the asked terms wins only when scoped
    near, named = cand("near", vector=0.75, keyword=2.0, rank=2), cand("named", vector=0.55, keyword=8.0, rank=1)
    order = {
        scoped: [
            c.chunk_id
            for c in fuse(
                [near, named], [["named", "near"]], "weighted", 60, *leg_weights(settings, scoped, True, True)
            )
        ]
        for scoped in (False, True)
    }
    assert order == {False: ["near", "named"], True: ["named", "near"]}


# ---- 4. floors ----------------------------------------------------------------------------------
FLOORS = Floors(combined=0.45, vector=0.15, keyword_override=0.9, keyword_rescue=0.5, scope="answer")


def test_floors_need_combined_and_vector_unless_keyword_top1_is_strong():
    assert passes(cand("a", vector=0.6, combined=0.5), 0.45, 0.15, 0.9)
    assert not passes(cand("b", vector=0.6, combined=0.44), 0.45, 0.15, 0.9)
    weak_vector = cand("c", vector=0.1, rank=1, combined=0.5)
    weak_vector.keyword_norm = 1.0
    assert passes(weak_vector, 0.45, 0.15, 0.9)
    weak_vector.keyword_rank = 2
    assert not passes(weak_vector, 0.45, 0.15, 0.9)


def test_candidate_scoped_floors_guard_the_citations_and_list_the_weak_apart():
    strong = cand("a", vector=0.7, combined=0.6)
    weak = cand("b", vector=0.3, combined=0.3)
    each = apply_floors("ledger-db failover steps", [strong, weak], replace(FLOORS, scope="candidate"))
    assert each.kept == [strong] and each.dropped == 1 and each.weak == [weak]
    assert QueryConfig().floor_scope == "candidate"  # the default (rule 10)


def test_answer_scoped_floors_keep_the_ranking_once_one_candidate_passes():
    strong = cand("a", vector=0.7, combined=0.6)
    weak = cand("b", vector=0.3, combined=0.3)  # under the combined floor: relevant sections often are
    answer = apply_floors("ledger-db failover steps", [strong, weak], replace(FLOORS, scope="answer"))
    assert answer.kept == [strong, weak] and answer.dropped == 0 and answer.weak == []
    # with nothing passing, the scope changes nothing: no answer
    nothing = apply_floors("ledger-db failover steps", [weak], replace(FLOORS, scope="answer"))
    assert nothing.kept == []


def test_a_question_scoped_to_a_document_family_meets_the_scoped_floor():
    settings = QueryConfig(combined_floor=0.38, combined_floor_scoped=0.32)
    middling = cand("a", vector=0.3, combined=0.35)  # a category question asked of the contract it names
    assert apply_floors("the date of the contract", [middling], Floors.of(settings, scoped=True)).kept == [middling]
    assert apply_floors("the date of the contract", [middling], Floors.of(settings)).kept == []


def test_nothing_relevant_gives_an_empty_result():
    ranked = [cand("a", vector=0.1, keyword=1.0, rank=1, text="sourdough starter", combined=0.3)]
    outcome = apply_floors("kubernetes pod eviction storm", ranked, FLOORS)
    assert outcome.kept == [] and not outcome.rescued


def test_exact_term_rescue_keeps_one_keyword_match_containing_the_terms():
    ranked = [
        cand("a", vector=0.1, keyword=2.0, rank=2, text="LEDGER_SYNC_TIMEOUT defaults", combined=0.3),
        cand("b", vector=0.1, keyword=3.0, rank=1, text="set LEDGER_SYNC_TIMEOUT to 30s", combined=0.3),
    ]
    outcome = apply_floors("LEDGER_SYNC_TIMEOUT value", ranked, FLOORS)
    assert [c.chunk_id for c in outcome.kept] == ["b"] and "keyword_rescue" in outcome.kept[0].flags
    assert [c.chunk_id for c in outcome.weak] == ["a"] and outcome.dropped == 1 and outcome.rescued
