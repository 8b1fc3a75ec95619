"""Each pure step of the query pipeline, on hand-made candidates and rows."""

import math
from dataclasses import replace

import pytest

from cairn.query.citations import citation, trail
from cairn.query.confidence import gaps, tier
from cairn.query.eval import documents_in_order, mrr, ndcg_at, recall_at, summarise
from cairn.query.floors import Floors, apply_floors, passes, wants_second_pass
from cairn.query.fusion import fuse, leg_weights, rrf
from cairn.query.gate import gate
from cairn.query.packing import PackItem, front_and_back, newest_per_section, pack
from cairn.query.retriever import one_version_per_document
from cairn.query.selection import Seed, SparseDocLimits, diversify, dominant_document, promote, sparse_doc_recall
from cairn.query.transform import seeds
from cairn.query.types import Block, Candidate, Hit
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


# ---- 1. gate ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "help",
        "how do I do it?",
        "the database",
        "what is this",
        "fix the server",
        "is it down",
        "what happened in 2024",
        "why",
        "the edge",
    ],
)
def test_gate_refuses_vague_queries(text):
    assert not gate(text, 3).passed


@pytest.mark.parametrize(
    "text",
    [
        "INC-4521",
        "values.yaml",
        "ops@acme.example",
        "db-1.prod.acme.io",
        "KubePodCrashLooping",
        "how do I fail over ledger-db",
        "restart edge_proxy",
        "kube-apiserver down",
        "OOMKilled",
        "ENOSPC",
        "503 errors",
        "ORA-00600",
        "/var/log/syslog",
        "runbooks/restart.md",
    ],
)
def test_gate_accepts_a_single_id_like_token(text):
    verdict = gate(text, 3)
    assert verdict.passed and verdict.id_like


def test_the_readme_and_makefile_example_queries_all_pass_the_gate():
    import re

    from tests.conftest import REPO

    text = "\n".join((REPO / name).read_text() for name in ("README.md", "Makefile", "docs/cli.md"))
    examples = set(re.findall(r'cairn query "([^"]+)"', text)) | set(re.findall(r'retrieve\("([^"]+)"', text))
    examples.discard("TEXT")
    assert len(examples) >= 4, examples
    assert [e for e in examples if not gate(e, 3).passed] == []


def test_every_dev_alert_summary_passes_the_gate():
    import json

    from tests.conftest import SHARED

    path = SHARED / "eval" / "dev" / "runbooks" / "prometheus-operator-runbooks.alerts.jsonl"
    if not path.exists():
        pytest.skip("../shared/eval/dev is absent")
    summaries = [json.loads(line)["summary"] for line in path.read_text().splitlines() if line.strip()]
    assert len(summaries) > 100 and [s for s in summaries if not gate(s, 3).passed] == []


def test_gate_counts_content_words_not_stopwords():
    assert gate("ledger primary failover", 3).passed
    assert not gate("how is the ledger", 3).passed
    assert gate("ledger primary down", 3).passed  # "down" is an operational fact, not a stopword


def test_gate_accepts_a_defined_term_but_not_a_capitalised_sentence_start():
    verdict = gate("What is the Determination Date?", 3)
    assert verdict.passed and verdict.id_like == ["Determination Date"]
    assert not gate("what is the determination date", 3).passed
    assert not gate("How Do I fix it?", 3).passed


# ---- 2. transform hook --------------------------------------------------------------------------
def test_transform_adds_seeds_and_falls_back_on_error():
    assert seeds("q", lambda t: f"hypothetical answer to {t}") == (["q", "hypothetical answer to q"], "1 extra seed(s)")

    def broken(text):
        raise RuntimeError("LLM down")

    texts, note = seeds("q", broken)
    assert texts == ["q"] and "RuntimeError" in note
    assert seeds("q", None) == (["q"], "off")


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


FLOORS = Floors(combined=0.45, vector=0.15, keyword_override=0.9, keyword_rescue=0.5, scope="answer")


# ---- 4. floors ----------------------------------------------------------------------------------
def test_floors_need_combined_and_vector_unless_keyword_top1_is_strong():
    assert passes(cand("a", vector=0.6, combined=0.5), 0.45, 0.15, 0.9)
    assert not passes(cand("b", vector=0.6, combined=0.44), 0.45, 0.15, 0.9)
    weak_vector = cand("c", vector=0.1, rank=1, combined=0.5)
    weak_vector.keyword_norm = 1.0
    assert passes(weak_vector, 0.45, 0.15, 0.9)
    weak_vector.keyword_rank = 2
    assert not passes(weak_vector, 0.45, 0.15, 0.9)


def test_answer_scoped_floors_keep_the_ranking_once_one_candidate_passes_and_candidate_scope_cuts_each():
    strong = cand("a", vector=0.7, combined=0.6)
    weak = cand("b", vector=0.3, combined=0.3)  # under the combined floor: relevant sections often are
    answer = apply_floors("ledger-db failover steps", [strong, weak], replace(FLOORS, scope="answer"))
    assert answer.kept == [strong, weak] and answer.dropped == 0
    each = apply_floors("ledger-db failover steps", [strong, weak], replace(FLOORS, scope="candidate"))
    assert each.kept == [strong] and each.dropped == 1
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


def test_second_pass_only_for_a_borderline_top_score():
    assert wants_second_pass(0.5, (0.45, 0.60))
    assert not wants_second_pass(0.60, (0.45, 0.60)) and not wants_second_pass(0.3, (0.45, 0.60))


# ---- 5-8. promotion, SD-MRG, dominance, diversity -----------------------------------------------
def test_promotion_scores_a_section_by_its_best_child():
    seeds_ = promote(
        [
            cand("c1", parent="p", fused=0.9, combined=0.5),
            cand("c2", parent="p", fused=0.8, combined=0.7),
            cand("c3", parent="q", fused=0.7, combined=0.6),
        ]
    )
    assert [s.parent_chunk_id for s in seeds_] == ["p", "q"]
    assert seeds_[0].children == ["c1", "c2"] and seeds_[0].combined == 0.7


def seed(pid, doc, fused=1.0, combined=0.5):
    return Seed(pid, doc, 0, fused, combined, 0.5, 0.5, [pid])


def test_sparse_doc_recall_injects_a_short_documents_close_chunk_once():
    selected = [seed("a1", "A"), seed("a2", "A"), seed("b1", "B")]
    dense = [cand("s1", doc="S", parent="sp", vector=0.85), cand("s2", doc="S", parent="sp2", vector=0.84)]
    out, injected = sparse_doc_recall(selected, dense, {"S": 2}, k=3, limits=SparseDocLimits(2, 0.20, 3))
    assert [s.parent_chunk_id for s in injected] == ["sp"]  # once per document
    assert len(out[:3]) == 3 and out[2].recall_injected and out[2].reason == "sparse_doc_recall"
    assert [s.parent_chunk_id for s in out[:2]] == ["a1", "a2"]  # counts toward k: it displaced b1


@pytest.mark.parametrize(
    "counts,vector,present", [({"S": 3}, 0.9, False), ({"S": 1}, 0.79, False), ({"S": 1}, 0.9, True)]
)
def test_sparse_doc_recall_does_not_fire_for_long_far_or_already_selected_documents(counts, vector, present):
    selected = [seed("a1", "A")] + ([seed("s0", "S")] if present else [])
    out, injected = sparse_doc_recall(
        selected, [cand("s1", doc="S", vector=vector)], counts, k=3, limits=SparseDocLimits(2, 0.20, 1)
    )
    assert injected == [] and out == selected


def test_dominant_document_needs_most_of_the_score_and_two_seeds():
    assert dominant_document([seed("a1", "A", 3), seed("a2", "A", 3), seed("b", "B", 1)], 3, 0.6) == "A"
    assert dominant_document([seed("a1", "A", 3), seed("b", "B", 3), seed("c", "C", 3)], 3, 0.6) is None
    assert dominant_document([seed("a1", "A", 9), seed("b", "B", 1)], 2, 0.6) is None


def test_diversity_caps_a_document_at_two_unless_the_rest_is_much_worse():
    close = [
        seed("a1", "A", combined=0.9),
        seed("a2", "A", combined=0.85),
        seed("a3", "A", combined=0.8),
        seed("b", "B", combined=0.75),
    ]
    assert [s.parent_chunk_id for s in diversify(close, 3, 2, 0.15)] == ["a1", "a2", "b"]
    far = [
        seed("a1", "A", combined=0.9),
        seed("a2", "A", combined=0.85),
        seed("a3", "A", combined=0.8),
        seed("b", "B", combined=0.5),
    ]
    assert [s.parent_chunk_id for s in diversify(far, 3, 2, 0.15)] == ["a1", "a2", "a3"]


# ---- 9. packing ---------------------------------------------------------------------------------
def row(section_id, order, tokens, doc="D", start=100, version="v1", text=None, **extra):
    return {
        "document_id": doc,
        "section_id": section_id,
        "section_order": order,
        "token_count": tokens,
        "text": text or f"<{section_id}>",
        "title": "Doc",
        "breadcrumbs": ["Doc", section_id],
        "version_hash": version,
        "temporal_start": start,
        "updated_at": None,
        "source_uri": "file:///d.md",
        "extra": extra,
    }


def test_packing_keeps_neighbours_in_document_order_within_the_budget():
    seed_row = row("b", 2, 400)
    blocks = pack([PackItem(1, seed_row, [row("c", 3, 300), row("a", 1, 300)])], budget=1000)
    assert blocks[0].section_ids == ["a", "b", "c"] and blocks[0].tokens == 1000
    assert blocks[0].text == "<a>\n\n<b>\n\n<c>"
    blocks = pack([PackItem(1, seed_row, [row("c", 3, 300), row("a", 1, 301)])], budget=1000)
    assert blocks[0].section_ids == ["b", "c"]


def test_packing_falls_back_to_the_hit_child_and_the_abstract_when_a_section_does_not_fit():
    big = row("big", 1, 900, abstract="what the section says", abstract_token_count=20)
    blocks = pack(
        [PackItem(1, row("first", 0, 600)), PackItem(2, big, children=[{"text": "the hit child", "token_count": 150}])],
        800,
    )
    assert blocks[1].text == "the hit child\n\nSection summary: what the section says"
    assert sum(b.tokens for b in blocks) <= 800


def test_front_and_back_puts_the_best_blocks_at_both_ends():
    blocks = [Block("D", [str(r)], "", 1, [], r) for r in range(1, 6)]
    assert [b.rank for b in front_and_back(blocks)] == [1, 3, 5, 4, 2]


def test_newest_version_of_a_section_wins_and_answers_never_mix_versions():
    rows = [row("a", 1, 10, start=100, version="v1"), row("a", 1, 10, start=200, version="v2")]
    assert newest_per_section(rows)[0]["version_hash"] == "v2"
    rows = [
        {"chunk_id": c, "document_id": d, "version_hash": v, "temporal_start": t}
        for c, d, v, t in [("a1", "a", "v1", 100), ("a2", "a", "v2", 200), ("b1", "b", "v9", 50)]
    ]
    assert one_version_per_document(rows) == {"a2", "b1"}


# ---- 10. citations ------------------------------------------------------------------------------
def test_citation_says_the_title_once_and_keeps_every_level():
    cited = citation(
        {
            "title": "Ledger failover",
            "breadcrumbs": ["Ledger failover", "Ledger failover", "Step 2", "Verify"],
            "section_id": "lf.step-2",
            "updated_at": 1_773_446_400,
            "version_hash": "e755cdc0ff",
            "source_uri": "file:///w/lf.md",
        }
    )
    assert cited == "Ledger failover › Step 2 › Verify (ve755cdc, updated 2026-03-14) file:///w/lf.md#lf.step-2"


def test_citation_of_a_whole_page_and_of_pdf_pages():
    assert trail("T", ["T"]) == ["T"]
    cited = citation(
        {
            "title": "MSA",
            "breadcrumbs": ["MSA", "Article 4"],
            "section_id": "msa.4",
            "updated_at": None,
            "version_hash": "abcdef123",
            "source_uri": "s3://b/msa.pdf",
            "extra": {"page_start": 3, "page_end": 5},
        }
    )
    assert cited == "MSA › Article 4 (vabcdef1, updated unknown, pp. 3-5) s3://b/msa.pdf#msa.4"


# ---- 11. confidence and gaps --------------------------------------------------------------------
def hit(score, vector=0.6, keyword=0.6, injected=False, flags=()):
    return Hit(
        "c",
        "d",
        "s",
        [],
        "T",
        "u",
        score,
        "",
        "",
        "v",
        None,
        "",
        vector_score=vector,
        keyword_score=keyword,
        recall_injected=injected,
        flags=list(flags),
    )


@pytest.mark.parametrize(
    "hits,expected",
    [
        ([hit(0.8)], "HIGH"),
        ([hit(0.8, keyword=0.1)], "MEDIUM"),
        ([hit(0.62)], "MEDIUM"),
        ([hit(0.52)], "LOW"),
        ([hit(0.47)], "SPECULATIVE"),
        ([], "SPECULATIVE"),
        ([hit(0.9, injected=True)], "SPECULATIVE"),
    ],
)
def test_confidence_tiers(hits, expected):
    level, reason = tier(hits, 0.50)
    assert level == expected and reason


def test_the_confidence_reason_speaks_of_the_hit_with_the_best_relevance_and_names_it():
    # the list is in fused order; the second hit has the best relevance, and only it has keyword agreement
    hits = [hit(0.7927, keyword=0.2), hit(0.7986, vector=0.8, keyword=0.9), hit(0.7946, keyword=0.1)]
    level, reason = tier(hits, 0.50)
    assert level == "HIGH" and reason.startswith("result 2: relevance 0.80, with vector (0.80) and keyword (0.90)")
    level, reason = tier([hit(0.62), hit(0.66)], 0.50)
    assert (level, reason) == ("MEDIUM", "result 2: relevance 0.66")


def test_gaps_name_requested_terms_no_text_contains():
    assert gaps("ledger failover kafka lag", ["Ledger failover procedure", "replication lags behind"]) == ["kafka"]


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
