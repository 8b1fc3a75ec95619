"""`cairn mcp` (cli/mcp.py): what it refuses before anything is opened, with nothing on stdout (the protocol's)."""

from __future__ import annotations

import pytest

from cairn.cli.app import main
from tests.cli_args import parsed

CALLER = ("--tenant", "acme", "--group", "sre")


def test_the_command_line_k_has_the_tools_bound():
    from cairn.serve.mcp import MAX_K  # the MCP SDK: imported by the tests that read it

    assert parsed("mcp", *CALLER, "--k", str(MAX_K))[1]["k"] == MAX_K
    assert parsed("mcp", *CALLER, "--group", "platform")[1]["group"] == ["sre", "platform"]


def test_a_k_past_the_tools_bound_is_refused_with_exit_2_and_stdout_left_empty(capsys):
    from cairn.serve.mcp import MAX_K

    assert main(["mcp", *CALLER, "--k", str(MAX_K + 1)]) == 2
    captured = capsys.readouterr()
    assert "--k" in captured.err and captured.out == ""


@pytest.mark.parametrize(
    "argv, named",
    [
        (["mcp", *CALLER, "--k", "0"], "--k"),
        (["mcp", "--group", "sre"], "non-empty tenant"),
        (["mcp", "--tenant", "acme"], "at least one group"),
        (["mcp", "--tenant", " ", "--group", "sre"], "non-empty tenant"),
    ],
)
def test_what_cannot_serve_is_refused_with_exit_2_and_stdout_left_empty(argv, named, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert named in captured.err and captured.out == ""


def test_a_missing_config_is_refused_before_serving(tmp_path, capsys):
    missing = tmp_path / "none.toml"
    assert main(["mcp", *CALLER, "--config", str(missing)]) == 2
    captured = capsys.readouterr()
    assert f"config file {missing} not found" in captured.err and captured.out == ""
