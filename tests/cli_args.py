"""What `cairn ...` arguments parse to, without running the command: the group's and the command's params,
through click's own make_context (the command function is never called)."""

from __future__ import annotations

import typer

from cairn.cli.app import COMMANDS, app


def parsed(*argv: str) -> tuple[dict, dict]:
    """(global options, command options) that `cairn *argv` would run with."""
    group = typer.main.get_command(app)
    position = next(i for i, arg in enumerate(argv) if arg in COMMANDS)  # built on first use (cli/app.py)
    root = group.make_context("cairn", list(argv[: position + 1]))
    command = group.get_command(root, argv[position])
    return root.params, command.make_context(argv[position], list(argv[position + 1 :]), parent=root).params
