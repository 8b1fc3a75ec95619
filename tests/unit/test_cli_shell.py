"""How `cairn` meets a person and a shell (cli/shell.py): every command's help ends with an example of it and
shows boolean flags as flags; `cairn completion SHELL` prints a script, and the command answers the shell's
completion requests offline."""

from __future__ import annotations

import pytest

from cairn.cli.app import COMMANDS, main


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_every_commands_help_has_an_example_and_no_bool_metavar(command, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")
    assert main([command, "--help"] if command else ["--help"]) == 0
    out = capsys.readouterr().out
    assert "Examples" in out and f"cairn {command or ''}".strip() in out.split("Examples", 1)[1]
    assert "<bool>" not in out
    assert "--help" in out  # the flags are still listed, only their type column is empty


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish", "powershell"])
def test_completion_prints_a_script_that_calls_cairn_back(shell, capsys):
    assert main(["completion", shell]) == 0
    assert "_CAIRN_COMPLETE" in capsys.readouterr().out


def test_an_unknown_shell_is_refused_with_the_known_ones(capsys):
    assert main(["completion", "tcsh"]) == 2
    err = capsys.readouterr().err
    assert "bash" in err and "zsh" in err


@pytest.mark.parametrize(
    "words, cword, expected",
    [
        ("cairn rec", 1, "reconcile"),
        ("cairn ingest --allow", 2, "--allow-mass-delete"),
        ("cairn completion z", 2, "zsh"),
    ],
)
def test_the_shell_is_answered_commands_flags_and_choices(words, cword, expected, capsys, monkeypatch):
    monkeypatch.setenv("_CAIRN_COMPLETE", "complete_bash")
    monkeypatch.setenv("COMP_WORDS", words)
    monkeypatch.setenv("COMP_CWORD", str(cword))
    assert main([]) == 0
    assert capsys.readouterr().out.split() == [expected]
