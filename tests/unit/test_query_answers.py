"""What an answer is made of, on hand-made rows and hits: context blocks packed by parent within the token budget
(rules 16, 24), one version per document (rule 15), citations (rules 17, 22), and how sure it is (confidence
tiers, rule 4; gaps, rule 5)."""

from dataclasses import replace

import pytest

from cairn.query.citations import citation, labels, subsection_citations, trail
from cairn.query.confidence import Match, Tiers, gaps, tier
from cairn.query.packing import ChildText, ContextSection, PackItem, front_and_back, newest_per_section, pack
from cairn.query.parents import one_version_per_document
from cairn.query.types import Block, Hit
from cairn.schemas.rows import ChunkRow


# ---- rules 16, 24: packing by parent ----------------------------------------------------------------
def row(section_id, order, tokens, doc="D", start=100, version="v1", text=None, parent="", **extra):
    return ChunkRow(
        chunk_id=f"{doc}:{section_id}",
        document_id=doc,
        section_id=section_id,
        parent_section_id=parent,
        section_order=order,
        token_count=tokens,
        text=text or f"<{section_id}>",
        title="Doc",
        breadcrumbs=["Doc", section_id],
        version_hash=version,
        temporal_start=start,
        source_uri="file:///d.md",
        extra=extra,
    )


def parent_row(section_id, order, tokens, abstract, abstract_tokens, doc="D"):
    return row(section_id, order, tokens, doc=doc, abstract=abstract, abstract_token_count=abstract_tokens)


def test_adjacent_sections_under_one_parent_merge_into_one_block_in_section_order():
    items = [
        PackItem(1, row("b", 2, 300, parent="p")),
        PackItem(2, row("c", 3, 300, parent="p")),
        PackItem(3, row("a", 1, 300, parent="p")),
    ]
    blocks, stats = pack(items, budget=1000)
    assert [b.section_ids for b in blocks] == [["a", "b", "c"]] and blocks[0].text == "<a>\n\n<b>\n\n<c>"
    assert blocks[0].rank == 1 and stats.merges == 2 and stats.citations == 3


def test_a_neighbour_under_the_floors_is_packed_as_context_of_its_seeds_block_and_never_cited():
    seed = row("step-2", 2, 300)
    before, after, far = row("step-1", 1, 200), row("step-3", 3, 200), row("other", 9, 200, doc="E")
    context = [ContextSection(seed.chunk_id, before), ContextSection(seed.chunk_id, after)]
    context.append(ContextSection("E:elsewhere", far))  # its seed is not packed: left out
    blocks, stats = pack([PackItem(1, seed)], budget=750, context=context)
    (block,) = blocks
    assert block.text == "<step-1>\n\n<step-2>\n\n<step-3>" and block.section_ids == ["step-2"]
    assert len(block.citations) == 1 and stats.citations == 1  # the seed's citation only
    assert block.context_from == ["step-1", "step-3"] and stats.context_sections == 2 and block.tokens == 700
    assert stats.context_left_out == ["other"]
    tight, stats = pack([PackItem(1, seed)], budget=500, context=context[:2])  # room for one neighbour only
    assert tight[0].context_from == ["step-1"] and stats.context_left_out == ["step-3"]


def test_adjacent_sections_of_different_parents_stay_apart():
    items = [PackItem(1, row("b", 2, 300, parent="p")), PackItem(2, row("c", 3, 300, parent="q"))]
    blocks, stats = pack(items, budget=1000)
    assert sorted(b.section_ids for b in blocks) == [["b"], ["c"]] and stats.merges == 0


def test_a_section_and_its_first_child_merge_as_one_subtree():
    items = [PackItem(1, row("c", 2, 300, parent="p")), PackItem(2, row("p", 1, 300)), PackItem(3, row("n", 3, 300))]
    blocks, stats = pack(items, budget=1000)
    assert [b.section_ids for b in blocks] == [["p", "c"], ["n"]] and stats.merges == 1  # n: another parent


def test_sections_merge_only_within_the_budget():
    items = [PackItem(1, row("a", 1, 600)), PackItem(2, row("b", 2, 500)), PackItem(3, row("c", 3, 300))]
    blocks, stats = pack(items, budget=1000)
    assert [b.section_ids for b in blocks] == [["a"], ["c"]]  # b (rank 2) did not fit; c did, alone
    assert sum(b.tokens for b in blocks) <= 1000 and stats.sections == 2


def test_a_lone_child_brings_its_parents_abstract_and_its_room_is_reserved():
    enclosing = parent_row("p", 0, 700, "what the whole step is about", 40)
    child = PackItem(1, row("c", 1, 500, parent="p"), parent=enclosing)
    # 500 + 40 fit in 560; another 30-token section (rank 2) fits only if the abstract's room is not taken
    other = PackItem(2, row("x", 5, 30, doc="E"))
    blocks, stats = pack([child, other], budget=560)
    first = next(b for b in blocks if b.rank == 1)
    assert first.text.startswith("what the whole step is about") and first.context_from == ["p"]
    assert stats.parent_abstracts == 1 and [b.rank for b in blocks] == [1]  # x did not fit: the abstract's room


def test_a_child_packed_with_its_parent_needs_no_abstract():
    enclosing = parent_row("p", 0, 300, "what the whole step is about", 40)
    blocks, stats = pack(
        [PackItem(1, row("c", 1, 300, parent="p"), parent=enclosing), PackItem(2, enclosing)], budget=600
    )
    assert stats.parent_abstracts == 0 and all("what the whole step" not in b.text for b in blocks)
    assert sum(b.tokens for b in blocks) == 600  # the reserved room came back to the parent


def test_packing_falls_back_to_the_hit_child_and_the_abstract_when_a_section_does_not_fit():
    big = row("big", 1, 900, abstract="what the section says", abstract_token_count=20)
    blocks, stats = pack(
        [PackItem(1, row("first", 0, 600)), PackItem(2, big, children=[ChildText("the hit child", 150)])],
        800,
    )
    assert blocks[1].text == "the hit child\n\nSection summary: what the section says"
    assert sum(b.tokens for b in blocks) <= 800 and stats.fallbacks == 1


def test_front_and_back_puts_the_best_blocks_at_both_ends():
    blocks = [Block("D", [str(r)], "", 1, [], r) for r in range(1, 6)]
    assert [b.rank for b in front_and_back(blocks)] == [1, 3, 5, 4, 2]
    items = [PackItem(rank, row(f"s{rank}", rank * 10, 100, doc=f"D{rank}")) for rank in range(1, 5)]
    assert [b.rank for b in pack(items, 1000)[0]] == [1, 3, 4, 2]


def test_newest_version_of_a_section_wins_and_answers_never_mix_versions():
    rows = [row("a", 1, 10, start=100, version="v1"), row("a", 1, 10, start=200, version="v2")]
    assert newest_per_section(rows)[0].version_hash == "v2"
    rows = [
        ChunkRow(chunk_id=c, document_id=d, version_hash=v, temporal_start=t, updated_at=u)
        for c, d, v, t, u in [("a1", "a", "v1", 100, 100), ("a2", "a", "v2", 200, 200), ("b1", "b", "v9", 50, 50)]
    ]
    assert one_version_per_document(rows) == {"a2", "b1"}
    # rule 15: the newest updated_at wins, whatever the validity starts say
    rows[0].updated_at = 300
    assert one_version_per_document(rows) == {"a1", "b1"}


# ---- 10. citations ------------------------------------------------------------------------------
def test_citation_says_the_title_once_and_keeps_every_level():
    cited = citation(
        ChunkRow(
            **{
                "title": "Ledger failover",
                "breadcrumbs": ["Ledger failover", "Ledger failover", "Step 2", "Verify"],
                "section_id": "lf.step-2",
                "updated_at": 1_773_446_400,
                "version_hash": "e755cdc0ff",
                "source_uri": "file:///w/lf.md",
            }
        )
    )
    assert cited == "Ledger failover › Step 2 › Verify (ve755cdc, updated 2026-03-14) file:///w/lf.md#lf.step-2"


def test_citation_of_a_whole_page_and_of_pdf_pages():
    assert trail("T", ["T"]) == ["T"]
    cited = citation(
        ChunkRow(
            **{
                "title": "MSA",
                "breadcrumbs": ["MSA", "Article 4"],
                "section_id": "msa.4",
                "updated_at": None,
                "version_hash": "abcdef123",
                "source_uri": "s3://b/msa.pdf",
                "extra": {"page_start": 3, "page_end": 5},
            }
        )
    )
    assert cited == "MSA › Article 4 (vabcdef1, updated unknown, pp. 3-5) s3://b/msa.pdf#msa.4"


# ---- rule 17: the tenant; rule 22: the detail label -----------------------------------------------------
def test_a_citation_names_the_tenant_whose_document_it_is():
    cited = citation(
        ChunkRow(
            **{
                "title": "Ledger failover",
                "breadcrumbs": ["Ledger failover"],
                "section_id": "lf",
                "updated_at": 1_773_446_400,
                "version_hash": "e755cdc0ff",
                "source_uri": "file:///w/lf.md",
                "tenant_id": "acme",
            }
        )
    )
    assert cited == "Ledger failover (ve755cdc, updated 2026-03-14, tenant acme) file:///w/lf.md#lf"


STEP = """## Step 3: promote the replica

Run pg_ctl promote on the replica.

### Verify replication

Check pg_stat_replication on the new primary; every standby should stream.

#### Lag query

SELECT now() - pg_last_xact_replay_timestamp();
"""


def test_citation_labels_keep_the_step_heading_the_first_deeper_and_the_deepest_heading_holding_the_match():
    crumbs = ["Ledger failover", "Step 3: promote the replica"]
    child = "SELECT now() -   pg_last_xact_replay_timestamp();"  # whitespace as a child may normalise it
    assert labels("Ledger failover", crumbs, STEP, child) == [
        "Ledger failover",
        "Step 3: promote the replica",
        "Verify replication",  # the first deeper heading (rule 22's "Detail")
        "Lag query",  # and the deepest, which holds the match (#53)
    ]
    assert labels("Ledger failover", crumbs, STEP, "Run pg_ctl promote on the replica.") == [
        "Ledger failover",
        "Step 3: promote the replica",
    ]
    assert labels("Ledger failover", crumbs, STEP, "text found nowhere") == [
        "Ledger failover",
        "Step 3: promote the replica",
    ]


PAGE = """# Drain a node

Before any maintenance, read the whole page.

## Step 1: cordon the node

Run kubectl cordon on the node so that nothing new lands on it.

### Detail: draining with PodDisruptionBudgets

kubectl drain respects PodDisruptionBudgets; a drain blocked by a budget waits until the budget allows eviction.

## Step 2: upgrade

Upgrade the kubelet.
"""


def test_a_match_under_a_detail_heading_is_cited_with_its_step_and_the_detail_not_the_step_alone():
    # the child starts in Step 1's text and runs into its Detail subsection, where the question's words are
    child = (
        "Run kubectl cordon on the node so that nothing new lands on it. ### Detail: draining with "
        "PodDisruptionBudgets kubectl drain respects PodDisruptionBudgets; a drain blocked by a budget waits"
    )
    cited = labels("Drain a node", ["Drain a node"], PAGE, child, query="drain blocked by a PodDisruptionBudget")
    assert cited == ["Drain a node", "Step 1: cordon the node", "Detail: draining with PodDisruptionBudgets"]
    # the same child asked about cordoning: its match is in Step 1's own text
    assert labels("Drain a node", ["Drain a node"], PAGE, child, query="cordon the node first") == [
        "Drain a node",
        "Step 1: cordon the node",
    ]


def test_a_step_match_is_not_cited_as_the_bare_title_when_the_child_renders_markup_differently():
    section = PAGE.replace("Run kubectl cordon", "Run [kubectl cordon](https://kubernetes.io/docs/cordon)")
    child = "Run kubectl cordon on the node so that nothing new lands on it."  # the link rendered as its text
    assert labels("Drain a node", ["Drain a node"], section, child) == ["Drain a node", "Step 1: cordon the node"]


def test_each_subsection_of_one_heading_is_cited_as_itself():
    section = """## Procedure

Pick the path that matches what happened.

### Unplanned failover

Patroni decides.

#### If Patroni already promoted a new leader

Repoint the pooler at the new leader.

#### If no leader was elected

Promote the healthiest replica by hand.

#### Failing over to the asynchronous replica

Accept the data loss in writing first.
"""
    crumbs = ["Ledger", "Procedure"]  # the section is "Procedure": its small subsections were packed into it
    cited = [
        labels("Ledger", crumbs, section, child)
        for child in (
            "Repoint the pooler at the new leader.",
            "Promote the healthiest replica by hand.",
            "Accept the data loss in writing first.",
        )
    ]
    assert [c[-1] for c in cited] == [
        "If Patroni already promoted a new leader",
        "If no leader was elected",
        "Failing over to the asynchronous replica",
    ]
    assert all(c[:-1] == ["Ledger", "Procedure", "Unplanned failover"] for c in cited)  # each its own citation


def test_a_hit_matched_in_two_subsections_cites_both_and_its_block_carries_each():
    section = row("proc", 1, 200, text=PAGE)
    section = replace(section, title="Drain a node", breadcrumbs=["Drain a node"], version_hash="abcdef1234")
    cordon = "Run kubectl cordon on the node so that nothing new lands on it."
    upgrade = "Upgrade the kubelet."
    first = citation(section, labels("Drain a node", ["Drain a node"], PAGE, cordon))
    more = subsection_citations(section, [cordon, upgrade, upgrade], "cordon", first)
    assert len(more) == 1 and "Drain a node › Step 2: upgrade (vabcdef1" in more[0]
    (block,), stats = pack([PackItem(1, section, cited=first, also_cited=more)], budget=1000)
    assert block.citations == [first, *more] and stats.citations == 2


def test_a_sibling_heading_merged_into_the_section_replaces_the_sections_own_label():
    merged = STEP + "\n## Step 4: repoint the pooler\n\nUpdate pgbouncer on pool-07.\n"
    crumbs = ["Ledger failover", "Step 3: promote the replica"]
    assert labels("Ledger failover", crumbs, merged, "Update pgbouncer on pool-07.") == [
        "Ledger failover",
        "Step 4: repoint the pooler",
    ]


# ---- rule 4: confidence tiers; rule 5: gaps ------------------------------------------------------------
TIERS = Tiers(high=0.85, direct=0.75, medium=0.65, low=0.45)


def hit(score=0.8, injected=False, flags=()):
    return Hit("c", "d", "s", [], "T", "u", score, "", "", "v", None, "", recall_injected=injected, flags=list(flags))


@pytest.mark.parametrize(
    "scores,expected",
    [
        ([0.90, 0.80], "HIGH"),
        ([0.90], "MEDIUM"),  # one direct match is not enough for HIGH
        ([0.84, 0.80, 0.80], "MEDIUM"),  # direct matches, but the top is not above the high line
        ([0.70], "MEDIUM"),
        ([0.50], "LOW"),
        ([0.45], "SPECULATIVE"),  # "above", as the spec says
    ],
)
def test_confidence_tiers_follow_the_spec_on_the_matched_chunks(scores, expected):
    level, reason = tier([hit()], [Match(score, "Step 2") for score in scores], TIERS)
    assert level == expected and reason


def test_no_hits_or_only_injected_or_rescued_ones_are_speculative():
    assert tier([], [], TIERS)[0] == "SPECULATIVE"
    assert tier([hit(injected=True)], [Match(0.95, "x"), Match(0.9, "x")], TIERS)[0] == "SPECULATIVE"
    assert tier([hit(flags=["keyword_rescue"])], [Match(0.95, "x"), Match(0.9, "x")], TIERS)[0] == "SPECULATIVE"


def test_the_reason_counts_the_direct_matches_and_names_where_they_are():
    one_place = [Match(0.91, "Section 1.01"), Match(0.80, "Section 1.01"), Match(0.78, "Section 1.01")]
    assert tier([hit()], one_place, TIERS) == ("HIGH", "3 direct matches in Section 1.01 (best 0.91)")
    spread = [Match(0.91, "Verify"), Match(0.80, "Step 2"), Match(0.79, "Verify"), Match(0.5, "Intro")]
    assert tier([hit()], spread, TIERS)[1] == "3 direct matches: 2 in Verify, 1 in Step 2 (best 0.91)"
    level, reason = tier([hit()], [Match(0.70, "Definitions"), Match(0.6, "Term")], TIERS)
    assert (level, reason) == ("MEDIUM", "found in context, no direct match: best 0.70 in Definitions")
    assert tier([hit()], [Match(0.5, "Clause 4")], TIERS)[1].startswith("inferred from related sections")


def test_gaps_name_requested_terms_no_text_contains():
    assert gaps("ledger failover kafka lag", ["Ledger failover procedure", "replication lags behind"]) == ["kafka"]


# ---- rule 13: the low-relevance flag -------------------------------------------------------------------
def test_a_hit_under_the_low_relevance_line_is_flagged_and_one_above_is_not():
    from cairn.query.hits import make_hit
    from cairn.query.selection import Seed

    section = replace(row("s", 1, 100), chunk_id="p", updated_at=1_773_446_400, doc_tag="", locator="d.md")
    weak = make_hit(Seed("p", "D", 1, 0.45, 0.45, 0.5, 0.2), section, "", low_relevance=0.50)
    strong = make_hit(Seed("p", "D", 1, 0.55, 0.55, 0.6, 0.2), section, "", low_relevance=0.50)
    assert weak.low_relevance and not strong.low_relevance
