"""The `cairn` command line: the top layer, above the flows and the query module."""

if not __name__.startswith("cairn."):  # the folder is mapped into the cairn namespace (pyproject.toml)
    raise ImportError(f"import cairn.{__name__}, not {__name__}: Cairn installs one top-level package")
from cairn.cli import app, exits


def main(argv: list[str] | None = None) -> int:
    """The console script's `cairn` (and `python -m cairn.cli`): `cairn.cli.app.main` on the process's arguments.
    When the command left nothing to finish (`exits.finished`: a question answered, its index client closed), the
    process ends at once with the command's exit code, its output flushed: the interpreter's own teardown (every
    module and extension freed one by one: 0.3 s of CPU after a `cairn query`) changes nothing a person or a
    script sees. Called with `argv` (in-process, by a test or a script), it returns the code as app.main does."""
    code = app.main(argv)
    if argv is None and exits.finished():
        exits.end_process(code)
    return code


__all__ = ["main"]
