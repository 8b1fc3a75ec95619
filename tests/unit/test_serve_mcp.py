"""The MCP `search` tool's own logic (serve/mcp.py), on hand-made results: the text a model reads, the structured
content, and arguments refused with one line. The server over stdio is tests/integration/test_mcp.py."""

from __future__ import annotations

import pytest

from cairn.errors import UsageError
from cairn.query.answers import result_json
from cairn.query.gate import GUIDANCE
from cairn.query.types import Block, Hit, RetrievalResult
from cairn.serve.mcp import MAX_K, REASON_CHARS, SEARCH_TOOL, Search, answer, parse, refusal, render


def hit(title: str, text: str) -> Hit:
    slug = title.lower().replace(" ", "-")
    return Hit(
        chunk_id=f"c-{slug}",
        document_id=f"d-{slug}",
        section_id=slug,
        breadcrumbs=[title],
        title=title,
        source_uri=f"file:///wiki/{slug}.md",
        score=0.7,
        text=text,
        citation=f"{title} (v1234567, updated 2025-06-15) file:///wiki/{slug}.md#{slug}",
        version_hash="1234567",
        updated_at="2025-06-15T00:00:00+00:00",
        doc_tag="",
    )


def answered(blocks: list[Block], gaps: list[str] | None = None) -> RetrievalResult:
    hits = [hit("Ledger DB failover", "Run pg_ctl promote."), hit("Kafka consumer lag", "Scale the writer.")]
    return RetrievalResult(
        "how do I promote the ledger replica",
        hits,
        blocks,
        confidence="HIGH",
        confidence_reason="result 1: relevance 0.76",
        gaps=gaps or [],
        diagnostics={"gate": "3 content words", "timings_ms": {"total": 1.0}},
    )


def test_each_block_is_headed_by_a_number_and_its_citations_in_the_order_packing_chose():
    blocks = [
        Block("d-ledger", ["promote", "repoint"], "Promote the replica.\n\nRepoint the pooler.\n", 40, ["A", "B"], 1),
        Block("d-kafka", ["lag"], "Scale the writer.", 20, ["C"], 2),
    ]
    assert render(answered(blocks, gaps=["zebra"])) == (
        "confidence: HIGH (result 1: relevance 0.76)\n"
        "not found in any section: zebra\n"
        "\n[1] A\n    B\nPromote the replica.\n\nRepoint the pooler.\n"
        "\n[2] C\nScale the writer."
    )


def test_without_blocks_each_hit_is_shown_with_its_citation():
    text = render(answered([]))
    assert text.splitlines()[2:] == [
        "[1] Ledger DB failover (v1234567, updated 2025-06-15) file:///wiki/ledger-db-failover.md#ledger-db-failover",
        "Run pg_ctl promote.",
        "",
        "[2] Kafka consumer lag (v1234567, updated 2025-06-15) file:///wiki/kafka-consumer-lag.md#kafka-consumer-lag",
        "Scale the writer.",
    ]


def test_a_question_too_vague_to_search_says_what_to_ask_instead():
    vague = RetrievalResult(
        "why",
        [],
        status="guidance",
        message=GUIDANCE,
        confidence="SPECULATIVE",
        confidence_reason="query too vague to search",
    )
    assert render(vague) == f"{GUIDANCE}\nconfidence: SPECULATIVE (query too vague to search)"


def test_the_structured_content_is_the_query_json_without_the_diagnostics():
    result = answered([Block("d-ledger", ["promote"], "Promote.", 10, ["A"], 1)])
    expected = result_json(result)
    del expected["diagnostics"]
    reply = answer(result)
    assert reply.structured_content == expected and not reply.is_error
    assert [c.text for c in reply.content] == [render(result)]


def test_arguments_are_read_into_a_search_and_the_schema_names_the_same_ones():
    assert parse({"query": "ledger failover", "k": MAX_K, "doc_tag": "ops", "as_of": "2025-06-01"}) == Search(
        "ledger failover", MAX_K, "ops", "2025-06-01"
    )
    assert parse({"query": "ledger failover", "k": None, "doc_tag": ""}) == Search("ledger failover")
    schema = SEARCH_TOOL.input_schema
    assert set(schema["properties"]) == set(Search.__dataclass_fields__)
    assert schema["required"] == ["query"] and schema["additionalProperties"] is False
    assert (schema["properties"]["k"]["minimum"], schema["properties"]["k"]["maximum"]) == (1, MAX_K)


@pytest.mark.parametrize(
    "arguments, reason",
    [
        ({"query": "ledger", "k": 0}, f"k: a whole number from 1 to {MAX_K}, got 0"),
        ({"query": "ledger", "k": MAX_K + 1}, f"k: a whole number from 1 to {MAX_K}, got {MAX_K + 1}"),
        ({"query": "ledger", "k": True}, f"k: a whole number from 1 to {MAX_K}, got True"),
        ({"query": "ledger", "k": "5"}, f"k: a whole number from 1 to {MAX_K}, got '5'"),
        ({"query": "  "}, "query: give the question as a non-empty string, got '  '"),
        ({}, "query: give the question as a non-empty string, got None"),
        ({"query": "ledger", "as_of": 20250601}, "as_of: a string, got 20250601"),
        ({"query": "ledger", "doc_tag": ["a"]}, "doc_tag: a string, got ['a']"),
    ],
)
def test_a_bad_argument_is_refused_with_one_line_naming_it(arguments, reason):
    with pytest.raises(UsageError) as refused:
        parse(arguments)
    assert str(refused.value) == reason


def test_the_caller_cannot_be_passed_as_an_argument():
    with pytest.raises(UsageError, match=r"^unknown argument 'groups': the tool takes query, k, doc_tag, as_of \("):
        parse({"query": "ledger", "tenant": "globex", "groups": ["globex-ops"]})


def test_a_tool_error_is_one_line_of_bounded_length():
    reply = refusal("index unavailable: first line\n  second line\twith a tab " + "x" * 1000)
    assert reply.is_error and len(reply.content) == 1
    text = reply.content[0].text
    assert "\n" not in text and len(text) == REASON_CHARS
    assert text.startswith("index unavailable: first line second line with a tab x")
