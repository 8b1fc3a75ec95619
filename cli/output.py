"""How `cairn` prints: JSON for scripts, Rich for a person at a terminal, plain text for a pipe or a file.

Rules every command follows:
- `--json`: exactly one JSON document on stdout (or one per line in batch mode), nothing else on stdout;
  messages, warnings and logs go to stderr.
- Human output is rendered with Rich only when stdout is a terminal; otherwise it is plain, stable text
  (scripts and tests read it). Text from the data (titles, paths, messages) is never read as Rich markup.
- Every line for a person has its control characters escaped (cairn/printable.py): a line keeps only the line
  breaks its own format put there, and a value from a document or a caller going into a line (a file name, an
  error) keeps none, through `value()`: it cannot erase a line or forge another.
- Streams are looked up at each call, so output follows a redirected sys.stdout/sys.stderr.
- Rich is imported only to render for a terminal.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from cairn.printable import printable

if TYPE_CHECKING:
    from rich.console import Console

# Rich is imported when a line is styled for a terminal, not before: a command whose output goes to a pipe, a
# file or a script (`--json`) never loads it (about 50 ms of a `cairn query`).


def value(text: object) -> str:
    """A value from a document or a caller, to put into a line for a person: every control character escaped,
    line breaks included."""
    return printable(text)


def print_json(data: Any) -> None:
    """One indented JSON document on stdout."""
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def print_json_line(data: Any, out=None) -> None:
    """One JSON document on one line (batch mode), on `out` or stdout."""
    (out or sys.stdout).write(json.dumps(data, ensure_ascii=False) + "\n")


def rich_enabled() -> bool:
    """Whether human output is rendered with Rich: only for a terminal."""
    return sys.stdout.isatty()


def console(stderr: bool = False) -> Console:
    """A Rich console on the current stdout (or stderr) that never wraps lines or guesses highlights."""
    from rich.console import Console

    return Console(file=sys.stderr if stderr else sys.stdout, highlight=False, soft_wrap=True)


def line(text: str = "", style: str | None = None) -> None:
    """A line for a person on stdout: styled at a terminal, plain otherwise (control characters escaped)."""
    text = printable(text, keep="\n")
    if rich_enabled():
        from rich.text import Text

        console().print(Text(text, style=style or ""))
    else:
        print(text)


def note(text: str) -> None:
    """A line about what the command is doing, on stderr (dim at a terminal), never on stdout."""
    _stderr_line(text, "dim")


def problem(text: str) -> None:
    """A line about something that went wrong, on stderr (red at a terminal)."""
    _stderr_line(text, "red")


def _stderr_line(text: str, style: str) -> None:
    """A line on stderr: styled at a terminal, plain otherwise (control characters escaped)."""
    text = printable(text, keep="\n")
    if sys.stderr.isatty():
        from rich.text import Text

        console(stderr=True).print(Text(text, style=style))
    else:
        print(text, file=sys.stderr)


@dataclass
class Column:
    header: str
    justify: Literal["left", "right"] = "left"


@dataclass
class Grid:
    """A table of text cells: a Rich table at a terminal, aligned columns otherwise."""

    columns: list[Column]
    rows: list[list[str]] = field(default_factory=list)
    title: str | None = None

    def add(self, *cells: Any) -> None:
        self.rows.append([printable(c) for c in cells])


def print_grid(grid: Grid) -> None:
    """Print `grid` on stdout (its title first, as a line of its own when plain)."""
    if rich_enabled():
        from rich.table import Table
        from rich.text import Text

        table = Table(title=grid.title, title_justify="left", show_edge=False)
        for column in grid.columns:
            table.add_column(column.header, justify=column.justify)
        for row in grid.rows:
            table.add_row(*(Text(cell) for cell in row))
        console().print(table)
        return
    if grid.title:
        print(grid.title)
    widths = [max([len(c.header), *(len(r[i]) for r in grid.rows)]) for i, c in enumerate(grid.columns)]
    for cells in [[c.header for c in grid.columns], *grid.rows]:
        parts = [
            cell.rjust(w) if c.justify == "right" else cell.ljust(w) for cell, w, c in zip(cells, widths, grid.columns)
        ]
        print("  ".join(parts).rstrip())
