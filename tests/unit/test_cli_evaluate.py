"""`cairn eval [beir]` (cli/evaluate.py): what its flags parse to, what is refused before any index is opened,
how labelled queries are read, and the metrics table (the scoring run itself: tests/integration/test_query.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cairn.cli.app import main
from cairn.cli.evaluate import EvalOptions, LabelledQuery, check_eval, print_eval, read_labelled
from cairn.errors import UsageError
from tests.cli_args import parsed


@pytest.fixture
def files(tmp_path) -> tuple[Path, Path]:
    queries, qrels = tmp_path / "q.jsonl", tmp_path / "qrels.tsv"
    queries.write_text(
        "\n".join(
            json.dumps(q)
            for q in [
                {"_id": "1", "text": "promote the ledger replica"},
                {"id": 2, "text": "consumer lag"},
                {"_id": "3", "text": "not judged"},
            ]
        )
        + "\n\n"
    )
    qrels.write_text("query-id\tcorpus-id\tscore\n1\tledger-failover\t1\n2\tkafka-lag.md\t2\n2\tother.md\t0\n")
    return queries, qrels


def test_every_flag_parses_to_its_value(files):
    queries, qrels = files
    _, params = parsed(
        "eval",
        "beir",
        "--corpus",
        str(queries),
        "--work",
        "w",
        "--queries",
        str(queries),
        "--qrels",
        str(qrels),
        "--tenant",
        "acme",
        "--group",
        "sre",
        "--group",
        "dba",
        "--k",
        "5",
        "--ablate",
        "floors,gate",
        "--json",
        "--config",
        "c.toml",
    )
    assert params == {
        "mode": "beir",
        "corpus": queries,
        "work": Path("w"),
        "queries": queries,
        "qrels": qrels,
        "tenant": "acme",
        "group": ["sre", "dba"],
        "k": 5,
        "ablate": "floors,gate",
        "as_json": True,
        "config": Path("c.toml"),
    }
    assert parsed("eval", "--queries", str(queries), "--qrels", str(qrels))[1]["k"] == 10


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["eval", "--qrels", "{qrels}"], "Missing option '--queries'"),
        (["eval", "sometimes", "--queries", "{queries}", "--qrels", "{qrels}"], "'sometimes' is not one of 'beir'"),
        (["eval", "--queries", "{queries}", "--qrels", "{queries}.missing"], "does not exist"),
    ],
)
def test_a_missing_unknown_or_absent_argument_exits_2(argv, fragment, files, capsys):
    queries, qrels = files
    assert main([a.format(queries=queries, qrels=qrels) for a in argv]) == 2
    assert fragment in " ".join(capsys.readouterr().err.replace("│", " ").split())  # Typer boxes and wraps it


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"beir": True}, "cairn eval beir needs --corpus"),
        ({"corpus": Path("c.jsonl")}, "--corpus and --work are for `cairn eval beir`"),
        ({"ablate": ("floors", "flors")}, "unknown step\\(s\\) to ablate: flors; known: .*floors"),
    ],
)
def test_arguments_that_cannot_be_evaluated_are_refused(changes, message):
    with pytest.raises(UsageError, match=message):
        check_eval(EvalOptions(Path("q"), Path("r"), **changes))
    check_eval(EvalOptions(Path("q"), Path("r"), beir=True, corpus=Path("c.jsonl"), ablate=("floors",)))


def test_an_unknown_step_exits_2_before_the_config_is_read(files, tmp_path, capsys):
    queries, qrels = files
    assert (
        main(
            [
                "eval",
                "--queries",
                str(queries),
                "--qrels",
                str(qrels),
                "--ablate",
                "flors",
                "--config",
                str(tmp_path / "none.toml"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "unknown step(s) to ablate: flors" in err and "config" not in err


def test_only_judged_queries_are_read_with_their_relevant_documents(files):
    queries, qrels = files
    assert read_labelled(queries, qrels) == [
        LabelledQuery("1", "promote the ledger replica", {"ledger-failover": 1}),
        LabelledQuery("2", "consumer lag", {"kafka-lag.md": 2}),
    ]


def test_a_broken_query_line_or_no_judged_query_is_refused_naming_the_file(files, tmp_path):
    queries, qrels = files
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"_id": "1", "text": "ok"}\n{"_id": "2"}\n')
    with pytest.raises(UsageError, match="broken.jsonl line 2: not a query"):
        read_labelled(broken, qrels)
    unjudged = tmp_path / "unjudged.tsv"
    unjudged.write_text("9\tx\t1\n")
    with pytest.raises(UsageError, match="no query of .*q.jsonl has a judgement in .*unjudged.tsv"):
        read_labelled(queries, unjudged)


def test_the_metrics_table_has_a_row_per_variant(capsys):
    metrics = {"ndcg@10": 0.9, "mrr": 0.85}
    print_eval(
        {
            "principal": {"tenant": "acme", "groups": ["sre"]},
            "queries": 2,
            "metrics": metrics,
            "ablations": {"floors": {"ndcg@10": 0.8, "mrr": 0.75}},
        },
        as_json=False,
    )
    assert capsys.readouterr().out.splitlines() == [
        "2 queries as acme",
        "variant    ndcg@10     mrr",
        "full        0.9000  0.8500",
        "no floors   0.8000  0.7500",
    ]


def test_a_search_leg_ablated_serves_alone_without_the_floors_set_for_the_fused_score(capsys):
    from cairn.cli.evaluate import ablated

    assert ablated("dense_leg") == {"dense_leg": False, "floors": False}  # the "BM25 only" row
    assert ablated("keyword_leg") == {"keyword_leg": False, "floors": False}
    assert ablated("diversity") == {"diversity": False}
    report = {"principal": {"tenant": "a", "groups": ["g"]}, "queries": 1, "metrics": {"mrr": 1.0}}
    print_eval({**report, "ablations": {"dense_leg": {"mrr": 0.5}}}, as_json=False)
    assert capsys.readouterr().out.splitlines()[-1].startswith("no dense_leg / floors")
