"""`cairn ingest`, `backfill`, `reconcile` (cli/ingest.py): what their flags parse to, what is refused before
Prefect is started, and how a run report and a drift are printed (the flows themselves: tests/integration)."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import pytest

from cairn.cli.app import main
from cairn.cli.exits import Outcome
from cairn.cli.flowrun import progress_kind
from cairn.cli.ingest import BackfillOptions, check_backfill, print_drifts, print_run_report
from cairn.errors import UsageError
from cairn.schemas.run_report import SOURCE_FAILURE, DocumentCounts, Failure, RunReport
from tests.cli_args import parsed

REPORT = RunReport(
    run_id="r1",
    documents=DocumentCounts(seen=4, indexed=3, failed=1),
    sections=6,
    chunks=20,
    tokens=3000,
    embeddings_computed=26,
    model_seconds=1.25,
    seconds=2.5,
    failures=[Failure("w", "binary.md", "binary file")],
)


def test_ingest_flags_parse_to_their_values():
    _, params = parsed("ingest", "--config", "c.toml", "--source", "w", "--cleanup", "full", "--wait", "2.5", "--json")
    assert params == {
        "config": Path("c.toml"),
        "source": "w",
        "cleanup": "full",
        "wait": 2.5,
        "as_json": True,
        "strict": False,
        "allow_mass_delete": False,
    }
    assert parsed("ingest")[1] == {
        "config": None,
        "source": None,
        "cleanup": None,
        "wait": 0.0,
        "as_json": False,
        "strict": False,
        "allow_mass_delete": False,
    }
    assert parsed("ingest", "--allow-mass-delete")[1]["allow_mass_delete"] is True


@pytest.mark.parametrize("argv", [["ingest", "--strict"], ["backfill", "--source", "w", "--strict"]])
def test_the_deprecated_strict_flag_is_still_accepted_and_ignored(argv, tmp_path, capsys):
    """Scripts written before 0.2 pass --strict: the command runs as without it (here: up to the missing config)."""
    missing = tmp_path / "none.toml"
    assert main([*argv, "--config", str(missing)]) == main([*argv[:-1], "--config", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.count(f"cairn: config error: config file {missing} not found") == 2 and "--strict" not in err


@pytest.mark.parametrize("command", ["ingest", "backfill"])
def test_the_deprecated_strict_flag_is_hidden_from_help(command, capsys):
    assert main([command, "--help"]) == 0
    assert "--strict" not in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["ingest", "--cleanup", "sometimes"], "--cleanup"),
        (["ingest", "--wait", "-1"], "--wait"),
        (["backfill", "--full"], "--source"),
        (["backfill", "--source", "w", "--commits", "0"], "--commits"),
    ],
)
def test_flags_with_bad_values_exit_2_naming_the_flag(argv, fragment, capsys):
    assert main(argv) == 2
    assert fragment in capsys.readouterr().err


def test_backfill_and_reconcile_flags_parse_to_their_values():
    _, params = parsed(
        "backfill",
        "--source",
        "infra",
        "--since",
        "2025-01-01",
        "--until",
        "2025-02-01",
        "--commits",
        "5",
        "--full",
        "--json",
        "--wait",
        "1",
    )
    assert params == {
        "source": "infra",
        "config": None,
        "since": "2025-01-01",
        "until": "2025-02-01",
        "commits": 5,
        "full": True,
        "wait": 1.0,
        "as_json": True,
        "strict": False,
    }
    _, params = parsed("reconcile", "--source", "w", "--fix", "--json", "--wait", "3")
    assert params == {"config": None, "source": "w", "fix": True, "wait": 3.0, "as_json": True, "scan": False}
    assert parsed("reconcile", "--scan")[1]["scan"] is True


@pytest.mark.parametrize(
    "since, until, flag", [("yesterday", None, "--since"), ("2025-01-01", "2025-13-01", "--until")]
)
def test_a_bad_backfill_date_is_refused_naming_the_flag(since, until, flag):
    with pytest.raises(UsageError, match=f"^{flag}: "):
        check_backfill(BackfillOptions("w", since=since, until=until))
    check_backfill(BackfillOptions("w", since="2025-01-01", until="2025-02-01T12:00"))


def test_a_bad_backfill_date_exits_2_before_the_config_is_read(tmp_path, capsys):
    assert main(["backfill", "--source", "w", "--since", "yesterday", "--config", str(tmp_path / "none.toml")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cairn: --since: 'yesterday' is not an ISO date") and "config" not in err


def test_an_ingest_with_a_missing_config_says_which_file(tmp_path, capsys):
    assert main(["ingest", "--config", str(tmp_path / "none.toml")]) == 2
    assert f"cairn: config error: config file {tmp_path / 'none.toml'} not found" in capsys.readouterr().err


def test_a_run_shows_progress_lines_away_from_a_terminal_and_nothing_under_quiet(capsys):
    logger = logging.getLogger("cairn")
    level = logger.level
    try:
        logger.setLevel(logging.WARNING)
        assert progress_kind(as_json=False) == progress_kind(as_json=True) == "lines"  # stderr is captured: no tty
        logger.setLevel(logging.ERROR)  # --quiet
        assert progress_kind(as_json=False) == "off"
    finally:
        logger.setLevel(level)


def test_a_run_report_prints_counts_on_stdout_and_each_failure_on_stderr(capsys):
    assert print_run_report(REPORT, as_json=False) is Outcome.INPUTS_FAILED
    captured = capsys.readouterr()
    assert (
        "4 seen, 3 indexed, 0 unchanged, 0 skipped, 0 deleted, 1 failed" in captured.out
        and "binary.md" not in captured.out
    )
    assert "seconds: 2.5 (the model: 1.2)" in captured.out  # how much of the run the model was
    assert captured.err.strip() == "FAILED w: binary.md: binary file"


def test_a_warning_is_printed_on_stderr_and_does_not_change_the_outcome(capsys):
    warned = replace(
        REPORT, failures=[], warnings=[Failure("legal", "scan.pdf", "2 of 9 pages have no text layer (pages 3, 4)")]
    )
    assert print_run_report(warned, as_json=False) is Outcome.OK
    captured = capsys.readouterr()
    assert captured.err.strip() == "WARNING legal: scan.pdf: 2 of 9 pages have no text layer (pages 3, 4)"
    assert "scan.pdf" not in captured.out


def test_the_outcome_says_whether_documents_or_a_whole_source_failed(capsys):
    assert print_run_report(REPORT, as_json=True) is Outcome.INPUTS_FAILED
    assert print_run_report(replace(REPORT, failures=[]), as_json=True) is Outcome.OK
    source_down = replace(REPORT, failures=[Failure("w", SOURCE_FAILURE, "folder gone")])
    assert print_run_report(source_down, as_json=True) is Outcome.SOURCES_FAILED
    assert capsys.readouterr().err == ""  # --json: the failures are in the report, not repeated


def test_a_drift_names_each_problem_under_its_source(capsys):
    from cairn.flows.reconcile import Drift  # the index's stack: imported by the one test that needs it

    drift = Drift(
        "w",
        documents_in_source=3,
        documents_indexed=2,
        rows_current=9,
        missing=["new.md", "bad.md"],
        failed={"bad.md": "binary file"},
        incomplete={"old.md": ["1 child rows missing"]},
        orphan_rows=2,
    )
    quiet = Drift("p", 1, 1, 4, refused={"wide.md": "front matter acl names groups"}, skipped={"_index.md": "empty"})
    print_drifts("found", [drift, quiet])
    assert capsys.readouterr().out.splitlines() == [
        "[found] w: DRIFT: 3 in source, 2 indexed, 9 current rows",
        "  missing: new.md (not ingested yet)",
        "  missing: bad.md (failed at the last ingest: binary file)",
        "  incomplete: old.md: 1 child rows missing",
        "  orphan rows: 2",
        "[found] p: clean: 1 in source, 1 indexed, 4 current rows",
        "  refused by policy (not drift): wide.md: front matter acl names groups",
        "  skipped: 1 with nothing to index (e.g. _index.md)",
    ]
