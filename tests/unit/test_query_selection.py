"""What decides which sections answer, on hand-made candidates: promotion and one version per document (rule 15),
the dominant-document gate and the order (rules 20-21), neighbour expansion (rule 23), diversity (rule 12) and
the short-document recall guarantee (rules 1-2)."""

import pytest

from cairn.query.expansion import Expansion, expand, served_and_context
from cairn.query.selection import (
    Seed,
    SparseDocLimits,
    by_continuity,
    deferred_by_diversity,
    distribution,
    diversify,
    dominance,
    dominant_document,
    keep_primary,
    newest_version,
    promote,
    sparse_doc_recall,
)
from cairn.query.types import Candidate
from cairn.schemas.rows import ChunkRow


def cand(cid, doc="d1", parent=None, vector=0.0, combined=0.0, distance=None, version="v1", updated=100):
    c = Candidate(cid, parent or f"p-{cid}", doc, f"s-{cid}", 0, "Title", ["Title"], "", 100, vector=vector)
    c.fused = c.combined = combined
    c.distance, c.version_hash, c.updated_at = distance, version, updated
    return c


def seed(pid, doc, fused=1.0, combined=0.5, labels=1):
    return Seed(pid, doc, 0, fused, combined, 0.5, 0.5, [pid], labels=labels)


# ---- promotion, rule 15 -------------------------------------------------------------------------------
def test_promotion_scores_a_section_by_its_best_child_and_keeps_each_childs_score():
    seeds_ = promote(
        [
            cand("c1", parent="p", combined=0.5, distance=0.3),
            cand("c2", parent="p", combined=0.7, distance=0.2),
            cand("c3", parent="q", combined=0.6),
        ]
    )
    assert [s.parent_chunk_id for s in seeds_] == ["p", "q"]
    assert seeds_[0].children == ["c1", "c2"] and seeds_[0].combined == 0.7 and seeds_[0].child_scores == [0.5, 0.7]
    assert seeds_[0].distance == 0.2  # its closest chunk's raw distance


def test_of_two_versions_of_a_document_only_the_newest_updated_at_answers():
    old = cand("o", doc="D", combined=0.9, version="v1", updated=100)
    new = cand("n", doc="D", combined=0.6, version="v2", updated=200)
    other = cand("x", doc="E", combined=0.5)
    kept, dropped = newest_version(promote([old, new, other]))
    assert [s.parent_chunk_id for s in kept] == ["p-n", "p-x"] and dropped == 1


# ---- rules 20-21: the dominant-document gate and the order ---------------------------------------------
def test_a_document_dominates_with_most_of_the_top_score_and_two_sections():
    assert dominant_document([seed("a1", "A", 3), seed("a2", "A", 3), seed("b", "B", 1)], 3, 0.6) == "A"
    assert dominant_document([seed("a1", "A", 3), seed("b", "B", 3), seed("c", "C", 3)], 3, 0.6) is None
    assert dominant_document([seed("a1", "A", 9), seed("b", "B", 1)], 2, 0.6) is None  # one section is a hit


def test_dominance_reports_its_score_and_the_documents_even_when_nothing_dominates():
    verdict = dominance([seed("a1", "A", 2), seed("b", "B", 1), seed("c", "C", 1)], 3, 0.6)
    assert (verdict.document, verdict.score, verdict.documents, verdict.primary) == ("A", 0.5, 3, None)


def test_the_gate_keeps_only_the_primary_documents_seeds():
    seeds_ = [seed("a1", "A"), seed("b", "B"), seed("a2", "A")]
    kept, dropped = keep_primary(seeds_, "A")
    assert [s.parent_chunk_id for s in kept] == ["a1", "a2"] and dropped == 1
    assert keep_primary(seeds_, None) == (seeds_, 0)  # nothing dominates: every document stays


def test_the_order_is_primary_first_then_fused_score_then_more_citation_labels():
    seeds_ = [seed("b", "B", fused=0.9), seed("a1", "A", fused=0.5, labels=2), seed("a2", "A", fused=0.5, labels=3)]
    assert [s.parent_chunk_id for s in by_continuity(seeds_, "A")] == ["a2", "a1", "b"]
    assert [s.parent_chunk_id for s in by_continuity(seeds_, None)] == ["b", "a2", "a1"]


# ---- rule 23: expansion ------------------------------------------------------------------------------
def parent_row(chunk_id, doc, order):
    return ChunkRow(
        chunk_id=chunk_id,
        document_id=doc,
        section_id=f"sec-{chunk_id}",
        section_order=order,
        title="T",
        breadcrumbs=["T", f"sec-{chunk_id}"],
        version_hash="v1",
        updated_at=100,
        temporal_start=100,
    )


@pytest.mark.parametrize("weight", [0.0, 0.5, 0.99])
def test_a_neighbour_scores_the_expansion_weight_of_its_seed_and_never_outranks_it(weight):
    seeds_ = [seed("a", "A", fused=0.8, combined=0.8), seed("b", "B", fused=0.7, combined=0.7)]
    grown, added = expand(seeds_, {"a": [parent_row("a+1", "A", 1)]}, Expansion(seeds=2, weight=weight))
    neighbour = next(s for s in grown if s.parent_chunk_id == "a+1")
    assert added == 1 and neighbour.fused == pytest.approx(0.8 * weight) and neighbour.fused < 0.8
    assert neighbour.expanded_from == "a" and "expanded" in neighbour.flags and neighbour.child_scores == []
    ordered = [s.parent_chunk_id for s in by_continuity(grown, None)]
    assert ordered.index("a+1") > ordered.index("a")
    assert (ordered.index("a+1") < ordered.index("b")) == (0.8 * weight > 0.7)  # the weight decides where


def test_only_the_first_n_seeds_are_expanded_and_a_section_already_found_is_not_added_twice():
    seeds_ = [seed("a", "A"), seed("b", "B"), seed("c", "C")]
    around = {
        "a": [parent_row("b", "A", 1), parent_row("a+1", "A", 2)],
        "c": [parent_row("c+1", "C", 1)],
    }
    grown, added = expand(seeds_, around, Expansion(seeds=2, weight=0.5))
    assert [s.parent_chunk_id for s in grown] == ["a", "b", "c", "a+1"] and added == 1


def test_when_the_floors_guard_the_citations_every_neighbour_is_context_only():
    seeds_ = [seed("a", "A", fused=0.95, combined=0.95)]
    grown, _ = expand(seeds_, {"a": [parent_row("a+1", "A", 1)]}, Expansion(seeds=1, weight=0.9))
    served, context = served_and_context(grown, floors_guard=True)
    assert [s.parent_chunk_id for s in served] == ["a"] and [s.parent_chunk_id for s in context] == ["a+1"]
    # its 0.855 comes from its seed, not from its own text: no evidence of its own to cite
    assert context[0].combined == pytest.approx(0.855) and context[0].child_scores == []
    assert served_and_context(grown, floors_guard=False) == (grown, [])


# ---- rule 12: diversity -------------------------------------------------------------------------------
def test_diversity_defers_a_documents_third_section_unless_the_rest_is_much_worse():
    close = [seed("a1", "A", combined=0.9), seed("a2", "A", combined=0.85), seed("a3", "A", combined=0.8)]
    close.append(seed("b", "B", combined=0.75))
    assert [s.parent_chunk_id for s in diversify(close, 2, 0.15)] == ["a1", "a2", "b", "a3"]
    far = close[:3] + [seed("b", "B", combined=0.5)]
    assert [s.parent_chunk_id for s in diversify(far, 2, 0.15)] == ["a1", "a2", "a3", "b"]


def test_diversity_keeps_each_documents_best_sections_whatever_order_they_come_in():
    # the order is the fusion's or the reranker's (fused); what a document keeps is its best by combined score
    a1, a2, a3 = (
        seed("a1", "A", fused=0.9, combined=0.70),
        seed("a2", "A", fused=0.8, combined=0.60),
        seed("a3", "A", fused=0.7, combined=0.827),
    )
    b = seed("b", "B", fused=0.6, combined=0.803)
    ordered = diversify([a1, a2, a3, b], 2, 0.15)
    assert [s.parent_chunk_id for s in ordered] == ["a1", "a3", "b", "a2"]  # a2, A's worst, is deferred
    assert deferred_by_diversity([a1, a2, a3, b], ordered, 3) == ["a2"]


def test_the_dominance_gate_never_drops_the_best_scoring_section():
    runbook = seed("r", "R", fused=0.5, combined=0.9)  # the best section, in a document with less of the score
    guide = [seed("g1", "G", fused=0.8, combined=0.7), seed("g2", "G", fused=0.7, combined=0.65)]
    kept, dropped = keep_primary([*guide, runbook, seed("x", "X", fused=0.2, combined=0.4)], "G")
    assert [s.parent_chunk_id for s in kept] == ["g1", "g2", "r"] and dropped == 1


def test_the_distribution_is_measured_on_the_top_k_before_the_gate():
    sections = [
        seed("a1", "A", fused=0.9),
        seed("a2", "A", fused=0.6),
        seed("b", "B", fused=0.5),
        seed("c", "C", fused=0.1),
    ]
    spread = distribution(sections, k=3)
    assert spread.documents == {"A": 2, "B": 1}  # the top 3 only
    assert spread.dominance_score == pytest.approx(0.75) and spread.primary_doc_fraction == pytest.approx(0.6667)
    assert distribution([], 3).primary_doc_fraction is None


def test_an_injected_section_gets_no_exemption_from_the_cap():
    injected = seed("a3", "A", combined=0.8)
    injected.recall_injected = True
    ranked = [seed("a1", "A", combined=0.9), seed("a2", "A", combined=0.85), injected, seed("b", "B", combined=0.8)]
    assert [s.parent_chunk_id for s in diversify(ranked, 2, 0.15)][:3] == ["a1", "a2", "b"]


# ---- rules 1-2: the short-document guarantee ----------------------------------------------------------
LIMITS = SparseDocLimits(max_chunks=2, max_distance=0.20, max_injections=1, top=20)


def test_the_window_is_three_times_k_or_top_n_whichever_is_larger():
    assert LIMITS.window(5) == 20 and LIMITS.window(10) == 30


def test_a_short_documents_close_chunk_is_injected_once_at_the_last_place_of_the_top_k():
    # a dominant document fills the whole top k after the gate and the caps
    ranked = [seed(f"a{i}", "A", fused=1 - i / 10) for i in range(4)]
    dense = [cand("s1", doc="S", parent="sp", distance=0.12), cand("s2", doc="S", parent="sp2", distance=0.15)]
    out, injected = sparse_doc_recall(ranked, dense, {"S": 2}, k=3, limits=LIMITS)
    assert [s.parent_chunk_id for s in injected] == ["sp"]  # its best chunk, once
    assert [s.parent_chunk_id for s in out[:3]] == ["a0", "a1", "sp"]  # counts toward k: it displaced a2
    hit = out[2]
    assert hit.recall_injected and hit.reason == "sparse_doc_recall" and hit.distance == 0.12
    assert hit.children == ["s1"] and hit.document_id == "S"


def test_at_most_max_injections_documents_are_injected():
    ranked = [seed(f"a{i}", "A") for i in range(4)]
    dense = [cand("s", doc="S", distance=0.1), cand("t", doc="T", distance=0.11)]
    limits = SparseDocLimits(2, 0.20, 2, 20)
    _, injected = sparse_doc_recall(ranked, dense, {"S": 1, "T": 1}, k=3, limits=limits)
    assert [s.document_id for s in injected] == ["S", "T"]
    _, injected = sparse_doc_recall(ranked, dense, {"S": 1, "T": 1}, k=3, limits=LIMITS)
    assert [s.document_id for s in injected] == ["S"]


@pytest.mark.parametrize(
    "counts,distance,present",
    [({"S": 3}, 0.1, False), ({"S": 1}, 0.21, False), ({"S": 1}, 0.1, True), ({}, 0.1, False)],
)
def test_the_guarantee_does_not_fire_for_long_far_already_selected_or_uncounted_documents(counts, distance, present):
    ranked = [seed("a1", "A")] + ([seed("s0", "S")] if present else [])
    out, injected = sparse_doc_recall(ranked, [cand("s1", doc="S", distance=distance)], counts, k=3, limits=LIMITS)
    assert injected == [] and out == ranked


def test_the_guarantee_looks_only_at_the_k_closest_chunks_by_raw_distance():
    ranked = [seed(f"a{i}", "A") for i in range(3)]
    near = [cand(f"n{i}", doc="N", distance=0.01 + i / 1000) for i in range(20)]  # a long document's chunks
    dense = [*near, cand("s1", doc="S", distance=0.19)]  # 21st by distance: outside max(3 x 3, 20)
    _, injected = sparse_doc_recall(ranked, dense, {"S": 1, "N": 40}, k=3, limits=LIMITS)
    assert injected == []


def test_a_chunk_under_the_floors_is_not_injected():
    ranked = [seed("a1", "A")]
    weak = cand("s1", doc="S", distance=0.1, combined=0.2)
    out, injected = sparse_doc_recall(ranked, [weak], {"S": 1}, 3, LIMITS, admissible=lambda c: c.combined >= 0.38)
    assert injected == [] and out == ranked
