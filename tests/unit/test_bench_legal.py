"""The legal benchmark's judgements: the found rule, nDCG by section, and what "plain hybrid" switches off."""

from bench.legal import found, plain_hybrid, section_ndcg
from cairn.schemas.config import QueryConfig


def test_a_section_counts_when_it_holds_the_answer_or_an_eight_word_run_of_it():
    answer = [
        {"text": "The Agreement shall be governed by the laws of the State of New York, without regard to conflicts"}
    ]
    assert found(answer, ["14.2 GOVERNED by the laws of the   State of New York, without regard"])
    assert not found(answer, ["governed by the laws of Delaware"])
    assert found([{"text": "NETWORK AFFILIATE AGREEMENT"}], ["Network Affiliate Agreement\nThis agreement..."])


def test_an_answer_extracted_with_a_word_split_is_found_where_the_text_layer_keeps_it_whole():
    dated = [{"text": "20t h day of December 2018"}]  # CUAD's extraction of a superscript "th"
    assert found(dated, ["made and entered into as of this 20th day of December, 2018, by and between"])
    assert not found(dated, ["made and entered into as of this 21st day of December, 2018"])
    assert found([{"text": "the Licensee shall indemnify"}], ["the Li- censee shall indem- nify"])  # hyphenation


def test_section_ndcg_rewards_answer_bearing_sections_ranked_early():
    bearing = {"s2", "s9"}
    assert section_ndcg(["s2", "s9", "s1"], bearing) == 1.0
    early, late = section_ndcg(["s2", "s1", "s3"], bearing), section_ndcg(["s1", "s3", "s2"], bearing)
    assert 0 < late < early < 1
    assert section_ndcg(["s1", "s3"], bearing) == 0.0
    assert section_ndcg(["s1"], set()) == 0.0  # nothing in the contract answers: no gain possible


def test_plain_hybrid_keeps_only_the_two_legs_and_their_fusion():
    settings = plain_hybrid(QueryConfig(steps={"packing": False}))
    on = [
        step
        for step in (
            "gate",
            "transform",
            "floors",
            "rerank",
            "sparse_doc_recall",
            "dominance",
            "diversity",
            "abstract_leg",
            "dense_leg",
            "keyword_leg",
        )
        if settings.enabled(step)
    ]
    assert on == ["dense_leg", "keyword_leg"]
    assert settings.enabled("packing") is False and settings.fusion == QueryConfig().fusion  # its own fusion
