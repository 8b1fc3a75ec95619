"""The retrieval metrics `cairn eval` reports (query/eval.py), against values worked by hand."""

import math

import pytest

from cairn.query.eval import documents_in_order, mrr, ndcg_at, recall_at, summarise


# ---- metrics ------------------------------------------------------------------------------------
def test_metrics_match_hand_computed_values():
    rel = {"a": 1, "b": 1}
    ranked = documents_in_order(["x", "a", "a", "y", "b"])
    assert ranked == ["x", "a", "y", "b"]
    assert recall_at(ranked, rel, 1) == 0 and recall_at(ranked, rel, 5) == 1
    assert mrr(ranked, rel) == 0.5
    assert ndcg_at(ranked, rel) == pytest.approx((1 / 1.5849625 + 1 / 2.3219281) / (1 + 1 / 1.5849625))
    assert summarise([(ranked, rel)])["hit@10"] == 1.0


def test_ndcg_on_graded_judgements_is_trec_evals_ndcg_cut_with_the_grade_as_gain():
    """trec_eval's ndcg_cut.10 (what BEIR reports): gain = grade, log2(rank + 1) discount, the ideal ranking
    from every judged relevant document. Worked by hand: ranked c(1) x a(3) b(2); judged a=3 b=2 c=1 d=2."""
    rel = {"a": 3, "b": 2, "c": 1, "d": 2}
    ranked = ["c", "x", "a", "b"]
    dcg = 1 / 1 + 0 + 3 / 2 + 2 / math.log2(5)  # ranks 1..4: log2(2)=1, log2(3), log2(4)=2, log2(5)
    idcg = 3 / 1 + 2 / math.log2(3) + 2 / 2 + 1 / math.log2(5)  # a, b|d, d|b, c
    assert ndcg_at(ranked, rel) == pytest.approx(dcg / idcg) == pytest.approx(0.5905, abs=1e-4)
    assert ndcg_at(ranked, rel, k=1) == pytest.approx(1 / 3)  # c (1) where a (3) could be
    assert ndcg_at(["x"], rel) == 0.0 and ndcg_at(["a"], {}) == 0.0
    assert recall_at(ranked, rel, 3) == pytest.approx(2 / 4)  # over every relevant document, judged ones included
