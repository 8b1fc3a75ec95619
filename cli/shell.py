"""How `cairn` meets a shell and a person reading its help: an example under every command's help, boolean flags
shown as flags (Typer renders a bare `--json` as `--json <bool>`), and `cairn completion SHELL`, the completion
script for bash, zsh, fish or PowerShell (Typer's, answered by this same command through $_CAIRN_COMPLETE).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import typer
from typer.core import TyperCommand, TyperGroup

# One example per command, shown at the foot of `cairn COMMAND --help` (each runs against the sample config).
EXAMPLES: dict[str, list[str]] = {
    "cairn": ["cairn --config data/cairn.toml status", "cairn ingest --help"],
    "ingest": ["cairn ingest", "cairn ingest --source runbooks --json"],
    "backfill": ["cairn backfill --source infra --since 2025-01-01 --until 2025-03-01"],
    "reconcile": ["cairn reconcile", "cairn reconcile --source runbooks --fix"],
    "query": [
        'cairn query "how do I fail over the ledger-db primary" --tenant acme --group sre --k 3',
        'cairn query "restart the invoice worker" --tenant acme --group sre --as-of 2025-02-01',
    ],
    "eval": ["cairn eval --queries queries.jsonl --qrels qrels.tsv --tenant acme --group sre --ablate floors"],
    "report": ["cairn report --source runbooks"],
    "status": ["cairn status --json"],
    "documents": ["cairn documents --source runbooks", "cairn documents --tenant acme --json"],
    "drop": ["cairn drop --source globex-wiki", "cairn drop --source globex-wiki --yes --json"],
    "export-query-model": ["cairn export-query-model models/query"],
    "serve": ["cairn serve --port 8080 --workers 2"],
    "new-key": ["cairn new-key --name demo --tenant acme --group sre --key-file demo.key >> data/cairn.toml"],
    "mcp": ["cairn mcp --tenant acme --group sre --k 5"],
    "completion": ['eval "$(cairn completion bash)"', "cairn completion zsh > ~/.zfunc/_cairn"],
}


def epilog(command: str) -> str:
    """The foot of a command's help: its examples, one per line (Markdown: the help is rendered as Markdown)."""
    return "**Examples**\n\n" + "\n\n".join(f"`{line}`" for line in EXAMPLES[command])


class _FlagsAsFlags:
    """A boolean flag takes no value: its help shows no type (no `<bool>`), as for --help itself."""

    def get_params(self, ctx: Any) -> list[Any]:
        params: list[Any] = super().get_params(ctx)  # type: ignore[misc]
        for param in params:
            if getattr(param, "is_flag", False) and param.metavar is None:
                param.metavar = ""
        return params


class CairnCommand(_FlagsAsFlags, TyperCommand):
    pass


class CairnGroup(_FlagsAsFlags, TyperGroup):
    pass


Shell = Literal["bash", "zsh", "fish", "powershell"]


def completion(shell: Annotated[Shell, typer.Argument(help="the shell to complete in", show_default=False)]) -> None:
    """Print the shell completion script of `cairn` (offline: the shell asks this same command for the words)."""
    from typer._completion_shared import get_completion_script
    from typer.completion import completion_init

    completion_init()
    print(get_completion_script(prog_name="cairn", complete_var="_CAIRN_COMPLETE", shell=shell))
