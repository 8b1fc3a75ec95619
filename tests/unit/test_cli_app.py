"""The `cairn` app itself (cli/app.py, cli/exits.py): global options, the one mapping from how a command ends
to its exit code, logging levels; the command as a process (the heavy layers staying unimported, `python -m`
and the console script): tests/integration/test_cli_process.py."""

from __future__ import annotations

import logging

import pytest
import typer

from cairn.cli import app as cli_app
from cairn.cli.app import finish, main, run
from cairn.cli.exits import EXIT_CODES, Outcome, for_error
from cairn.errors import CairnError, ConfigError, IndexBusy, QualityFailed, UsageError
from tests.cli_args import parsed

COMMANDS = ("ingest", "backfill", "reconcile", "query", "eval", "report", "status", "mcp")


def probe_app() -> typer.Typer:
    """An app with the real global options and result callback, whose commands end in each possible way."""
    probe = typer.Typer(result_callback=finish, add_completion=False)
    probe.callback()(cli_app.cairn)

    @probe.command()
    def ends(outcome: str = "OK") -> Outcome:
        return Outcome[outcome]

    @probe.command()
    def refuses(kind: str) -> None:
        raise {
            "usage": UsageError("--since: 'x' is not an ISO date"),
            "config": ConfigError("c.toml: bad key"),
            "quality": QualityFailed("expectations failed"),
            "busy": IndexBusy("held by pid 7"),
        }[kind]

    @probe.command()
    def crashes() -> None:
        raise RuntimeError("a bug")

    @probe.command()
    def speaks() -> None:
        logging.getLogger("cairn.probe").info("info line")
        logging.getLogger("cairn.probe").warning("warning line")
        logging.getLogger("cairn.probe").error("error line")

    return probe


def test_help_lists_every_command_and_exits_zero(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in COMMANDS)


def test_version_prints_the_installed_version_and_exits_zero(capsys):
    from importlib.metadata import version

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"cairn {version('cairn')}\n"


def test_every_command_has_help(capsys):
    for name in COMMANDS:
        assert main([name, "--help"]) == 0, name
        assert "--config" in capsys.readouterr().out, name


@pytest.mark.parametrize("outcome", list(Outcome))
def test_a_returned_outcome_exits_with_its_code_from_the_one_table(outcome):
    assert run(probe_app(), ["ends", "--outcome", outcome.name]) == EXIT_CODES[outcome]


def test_the_exit_code_table_keeps_todays_codes():
    assert EXIT_CODES == {
        Outcome.OK: 0,
        Outcome.INPUTS_FAILED: 1,
        Outcome.SOURCES_FAILED: 2,
        Outcome.DRIFT: 1,
        Outcome.CHECKS_FAILED: 1,
        Outcome.LINES_FAILED: 1,
    }


@pytest.mark.parametrize(
    "kind, code, message",
    [
        ("usage", 2, "cairn: --since: 'x' is not an ISO date"),
        ("config", 2, "cairn: config error: c.toml: bad key"),
        ("quality", 1, "cairn: expectations failed"),
        ("busy", 2, "cairn: held by pid 7"),
    ],
)
def test_a_cairn_error_prints_its_message_without_traceback_and_exits_with_its_code(kind, code, message, capsys):
    assert run(probe_app(), ["refuses", kind]) == code
    captured = capsys.readouterr()
    assert captured.err.strip() == message and captured.out == ""


def test_any_other_exception_is_a_bug_and_keeps_its_traceback():
    with pytest.raises(RuntimeError, match="a bug"):
        run(probe_app(), ["crashes"])


def test_an_error_exits_with_its_kinds_own_code():
    assert for_error(IndexBusy("held")) == IndexBusy.exit_code == 2
    assert for_error(QualityFailed("expectations failed")) == QualityFailed.exit_code == 1


def test_every_error_kind_exits_with_a_documented_code():
    kinds = [CairnError, *CairnError.__subclasses__()]
    assert {kind.exit_code for kind in kinds} <= {1, 2}


def test_typer_usage_errors_exit_2(capsys):
    assert main(["status", "--no-such-flag"]) == 2
    assert "--no-such-flag" in capsys.readouterr().err
    assert main(["no-such-command"]) == 2


def test_verbose_and_quiet_exclude_each_other(capsys):
    assert main(["--verbose", "--quiet", "status"]) == 2
    assert "exclude each other" in capsys.readouterr().err


def test_verbose_logs_info_default_logs_warnings_quiet_logs_errors_only(capsys, monkeypatch):
    monkeypatch.setenv("PREFECT_LOGGING_LEVEL", "WARNING")  # --quiet sets it for Prefect; restored after the test
    expected = {"--verbose": ["info", "warning", "error"], None: ["warning", "error"], "--quiet": ["error"]}
    for flag, levels in expected.items():
        assert run(probe_app(), [*filter(None, [flag]), "speaks"]) == 0
        captured = capsys.readouterr()
        assert captured.out == ""
        assert [lvl for lvl in ("info", "warning", "error") if f"{lvl} line" in captured.err] == levels, flag


def test_main_leaves_the_process_logging_as_it_found_it(monkeypatch):
    monkeypatch.setenv("PREFECT_LOGGING_LEVEL", "WARNING")
    logger = logging.getLogger("cairn")
    before = (logger.level, list(logger.handlers))
    run(probe_app(), ["--quiet", "speaks"])
    assert (logger.level, list(logger.handlers)) == before
    import os

    assert os.environ["PREFECT_LOGGING_LEVEL"] == "WARNING"


def test_config_is_accepted_before_and_after_the_command_and_after_wins(tmp_path, capsys):
    before, after = tmp_path / "before.toml", tmp_path / "after.toml"
    assert parsed("--config", str(before), "status")[0]["config"] == before
    assert main(["--config", str(before), "status"]) == 2
    assert f"config file {before} not found" in capsys.readouterr().err
    assert main(["--config", str(before), "status", "--config", str(after)]) == 2
    assert f"config file {after} not found" in capsys.readouterr().err


def test_main_called_with_arguments_returns_even_when_the_command_finished_everything():
    """cairn.cli.main ends the process itself only as the console script (no argv): a caller in-process gets the
    exit code back."""
    from cairn.cli import exits, main

    exits.nothing_left_to_finish()
    try:
        assert main(["--version"]) == 0
    finally:
        exits._finished.clear()
