"""Steps 9-11 on hand-made rows and hits: what an answer is made of (context blocks packed within the token
budget, one version per document, citations) and how sure it is (confidence tiers and gaps)."""

import pytest

from cairn.query.citations import citation, trail
from cairn.query.confidence import gaps, tier
from cairn.query.packing import PackItem, front_and_back, newest_per_section, pack
from cairn.query.parents import one_version_per_document
from cairn.query.types import Block, Hit


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
