"""`cairn query` (cli/query.py): what its flags parse to, what is refused before anything is opened, and what
the human listing and the JSON contract print for a result (the retrieval itself: tests/integration)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cairn.cli.app import main
from cairn.cli.query import QueryOptions, Scope, check_query, parse_filters, print_result
from cairn.errors import UsageError
from cairn.query.answers import result_json
from cairn.query.types import Hit, RetrievalResult
from cairn.schemas.records import Principal
from tests.cli_args import parsed


def hit(section: str, fused: float, score: float, **extra) -> Hit:
    return Hit(
        chunk_id=f"c-{section}",
        document_id="d1",
        section_id=section,
        breadcrumbs=["Runbook", section],
        title="Runbook",
        source_uri="file:///runbook.md",
        score=score,
        text=f"text of {section} " * 3,
        citation=f"Runbook › {section}",
        version_hash="abc1234",
        updated_at=None,
        doc_tag="",
        fused=fused,
        **extra,
    )


def test_every_flag_parses_to_its_value_and_group_repeats():
    _, params = parsed(
        "query",
        "--config",
        "c.toml",
        "how do I fail over",
        "--tenant",
        "acme",
        "--group",
        "sre",
        "--group",
        "dba",
        "--k",
        "3",
        "--doc-tag",
        "msa",
        "--as-of",
        "2025-03-01",
        "--filters",
        '{"service_name": "ledger"}',
        "--explain",
        "--json",
    )
    assert params == {
        "config": Path("c.toml"),
        "text": "how do I fail over",
        "tenant": "acme",
        "group": ["sre", "dba"],
        "k": 3,
        "doc_tag": "msa",
        "as_of": "2025-03-01",
        "filters": '{"service_name": "ledger"}',
        "explain": True,
        "queries": None,
        "output_path": None,
        "as_json": True,
        "url": None,
        "key_file": None,
    }


def test_batch_flags_parse_and_the_queries_file_must_exist(tmp_path, capsys):
    queries = tmp_path / "q.jsonl"
    queries.write_text("")
    _, params = parsed("query", "--queries", str(queries), "--output", str(tmp_path / "out.jsonl"))
    assert params["queries"] == queries and params["output_path"] == tmp_path / "out.jsonl"
    assert main(["query", "--queries", str(tmp_path / "missing.jsonl")]) == 2
    # the error box wraps long paths, at any space: compare without the box and without whitespace
    flat = "".join("".join(line.strip(" │") for line in capsys.readouterr().err.splitlines()).split())
    assert "missing.jsonl'doesnotexist" in flat


@pytest.mark.parametrize(
    "options, message",
    [
        (QueryOptions(), "give the question text, or --queries"),
        (QueryOptions(text="q", tenant="acme"), "needs --tenant and at least one --group"),
        (QueryOptions(text="q", groups=("sre",)), "needs --tenant and at least one --group"),
        (
            QueryOptions(text="q", tenant="acme", groups=("sre",), as_of="last tuesday"),
            "--as-of: 'last tuesday' is not an ISO date",
        ),
        (QueryOptions(text="q", tenant="acme", groups=("sre",), filters="{service: x}"), "--filters is not valid JSON"),
        (
            QueryOptions(text="q", tenant="acme", groups=("sre",), filters='["ledger"]'),
            "--filters must be a JSON object",
        ),
        (QueryOptions(text="q", tenant="acme", groups=("sre",), output=Path("o.jsonl")), "--output is for batch mode"),
        (QueryOptions(text="q", queries=Path("q.jsonl")), "not both"),
        (QueryOptions(text="q", tenant=" ", groups=("sre",)), "--tenant/--group: Principal needs a non-empty tenant"),
        (QueryOptions(text="q", tenant="acme", groups=(" ",)), "--tenant/--group: Principal needs at least one group"),
    ],
)
def test_arguments_that_cannot_be_asked_are_refused_naming_what_to_fix(options, message):
    with pytest.raises(UsageError, match=message.replace("?", r"\?").replace("[", r"\[")):
        check_query(options)


def test_a_good_query_is_parsed_into_its_scope():
    scope = check_query(
        QueryOptions(
            text="q",
            tenant="acme",
            groups=("sre",),
            k=4,
            as_of="2025-01-02",
            filters='{"severity": ["sev1"]}',
            explain=True,
        )
    )
    assert scope == Scope(
        k=4, as_of=1735776000, filters={"severity": ["sev1"]}, explain=True, principal=Principal("acme", ["sre"])
    )
    assert parse_filters(None) is None and parse_filters("") is None


def test_a_refused_query_exits_2_before_any_config_is_read(tmp_path, capsys):
    assert main(["query", "x", "--config", str(tmp_path / "none.toml")]) == 2
    err = capsys.readouterr().err
    assert "--tenant and at least one --group" in err and "config" not in err and "Traceback" not in err


def test_the_listing_labels_the_ranking_score_and_the_relevance_score_of_each_hit(capsys):
    # the second hit is ranked lower (fused) but is more relevant (score): both numbers are shown, labelled
    result = RetrievalResult(
        "fail over",
        [hit("intro", 0.0315, 0.7183), hit("procedure", 0.0304, 0.7314, flags=["expanded"])],
        confidence="HIGH",
        confidence_reason="top score 0.73",
    )
    print_result(result, explain=False)
    lines = capsys.readouterr().out.splitlines()
    ranked = [line for line in lines if line[:2] in ("1.", "2.")]
    assert ranked == ["1. fused 0.0315  relevance 0.7183", "2. fused 0.0304  relevance 0.7314 [expanded]"]
    assert any("ranked by fused" in line and "relevance" in line for line in lines)
    assert "   Runbook › intro" in lines and lines[0] == "confidence: HIGH (top score 0.73)"


def test_with_weighted_fusion_the_listing_says_it_is_ranked_by_the_relevance_it_shows(capsys):
    result = RetrievalResult(
        "fail over",
        [hit("procedure", 0.7314, 0.7314), hit("intro", 0.7183, 0.7183)],
        confidence="HIGH",
        confidence_reason="top score 0.73",
    )
    print_result(result, explain=False)
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("ranked by relevance") for line in lines) and not any(
        "ranked by fused" in line for line in lines
    )
    assert [line for line in lines if line[:2] in ("1.", "2.")] == [
        "1. fused 0.7314  relevance 0.7314",
        "2. fused 0.7183  relevance 0.7183",
    ]


def test_a_result_without_hits_prints_its_message_and_gaps(capsys):
    print_result(
        RetrievalResult("zzz qqq", [], status="no_results", message="no relevant documents", gaps=["zzz"]), explain=True
    )
    out = capsys.readouterr().out
    assert out.startswith("no relevant documents\nnot found in any result: zzz\n") and "ranked by" not in out
    assert json.loads(out.split("zzz\n", 1)[1]) == {}  # --explain: the (empty) trace as JSON


def test_an_empty_result_prints_why_it_is_empty(capsys):
    said = "Nothing in this index is readable by tenant 'x' with groups y: check the tenant and groups you ask as."
    print_result(RetrievalResult("q", [], status="no_results", message=said, empty_reason="no_access"), explain=False)
    assert capsys.readouterr().out == f"{said} [no_access]\n"


def test_the_json_contract_keeps_its_keys():
    data = result_json(RetrievalResult("q", [hit("intro", 0.03, 0.7)], diagnostics={"x": 1}))
    assert list(data) == [
        "query",
        "status",
        "message",
        "confidence",
        "confidence_reason",
        "gaps",
        "results",
        "blocks",
        "diagnostics",
        "empty_reason",
        "ordered_by",
    ]
    assert {
        "chunk_id",
        "document_id",
        "section_id",
        "breadcrumbs",
        "title",
        "source_uri",
        "score",
        "text",
        "citation",
        "deep_link",
        "recall_injected",
        "flags",
        "fused",
        "vector_score",
        "keyword_score",
        "rank",
    } <= set(data["results"][0])
    assert data["results"][0]["score"] == 0.7 and data["results"][0]["rank"] == 1
    assert "by `fused`" in data["ordered_by"] and "`score` is the calibrated relevance" in data["ordered_by"]


def test_a_config_whose_transform_hook_cannot_be_imported_exits_2_with_one_line_naming_the_key(tmp_path, capsys):
    config = tmp_path / "cairn.toml"
    config.write_text('[query]\ntransform = "no_such_module:hyde"\n', encoding="utf-8")
    assert main(["query", "--config", str(config), "how do I fail over", "--tenant", "acme", "--group", "sre"]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == (
        f"cairn: config error: {config}: query.transform: 'no_such_module:hyde' cannot be "
        "loaded: ModuleNotFoundError: No module named 'no_such_module'"
    )
    assert captured.out == ""


def test_an_as_of_outside_the_years_1_to_9999_exits_2_with_one_line(tmp_path, capsys):
    """Issue #51: `cairn query --as-of 0001-01-01T00:00:00+14:00` exited 1 with a traceback."""
    argv = ["query", "x", "--tenant", "acme", "--group", "sre", "--as-of", "0001-01-01T00:00:00+14:00"]
    assert main([*argv, "--config", str(tmp_path / "none.toml")]) == 2
    err = capsys.readouterr().err
    assert "--as-of: '0001-01-01T00:00:00+14:00' is outside the years 1 to 9999" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_query_that_cannot_open_its_index_ends_only_once_the_encoder_load_beside_it_has(monkeypatch, tmp_path):
    """The encoder loads in a thread while the query imports; the interpreter torn down while that thread was in
    native code aborted the process (exit -6, "terminate called without an active exception") instead of exit 2."""
    import threading
    import time

    import cairn.embedding.model as model
    import cairn.index.engine_import as engine_import
    from cairn.cli import query
    from cairn.errors import CairnError
    from cairn.query import Retriever
    from cairn.schemas.config import load_config
    from tests.conftest import write_config

    def slow_encoder(config):
        time.sleep(0.5)  # the ONNX session in the making
        raise RuntimeError("not loaded here")

    def no_index(config):
        raise CairnError("no index: run `cairn ingest` first")

    monkeypatch.setattr(model, "query_encoder_for", slow_encoder)
    monkeypatch.setattr(engine_import, "import_pymilvus", lambda: None)
    monkeypatch.setattr(Retriever, "from_config", no_index)
    config = load_config(write_config(tmp_path / "c.toml", tmp_path / "index", []))
    options = QueryOptions(text="anything")
    scope = Scope(principal=Principal("t", ["g"]), k=3)
    with pytest.raises(CairnError, match="cairn ingest"):
        query.run_query(config, options, scope)
    assert not any(t.name == "cairn-warm-encoder" and t.is_alive() for t in threading.enumerate())
