"""How `cairn` prints (cli/output.py): plain aligned text for a pipe, Rich for a terminal, data never read as
markup, JSON alone on stdout."""

from __future__ import annotations

import io
import json
import sys

from cairn.cli import output


class Terminal(io.StringIO):
    """A stdout that says it is a terminal, as a person's shell is."""

    def isatty(self) -> bool:
        return True


def test_a_grid_is_plain_aligned_text_for_a_pipe(capsys):
    grid = output.Grid([output.Column("tenant"), output.Column("rows", "right")], title="index: 1,210 rows")
    grid.add("acme", 1200)
    grid.add("globex-long-name", 10)
    output.print_grid(grid)
    assert capsys.readouterr().out.splitlines() == [
        "index: 1,210 rows",
        "tenant            rows",
        "acme              1200",
        "globex-long-name    10",
    ]


def test_at_a_terminal_a_grid_is_a_rich_table_and_brackets_in_the_data_stay_text(monkeypatch):
    screen = Terminal()
    monkeypatch.setattr(sys, "stdout", screen)
    grid = output.Grid([output.Column("section"), output.Column("rows", "right")])
    grid.add("[milvus] uri", 3)
    output.print_grid(grid)
    output.line("[bold]not markup[/bold]", style="bold")
    shown = screen.getvalue()
    assert "[milvus] uri" in shown and "[bold]not markup[/bold]" in shown
    assert "━" in shown  # Rich's header rule: this is the Rich rendering, not the plain one


def test_plain_lines_are_printed_verbatim_and_problems_go_to_stderr(capsys):
    output.line("[query] k = 8")
    output.problem("cairn: [milvus] uri is wrong")
    captured = capsys.readouterr()
    assert captured.out == "[query] k = 8\n" and captured.err == "cairn: [milvus] uri is wrong\n"


def test_json_is_one_document_and_batch_lines_are_one_per_line(capsys):
    output.print_json({"a": "é", "b": [1]})
    output.print_json_line({"id": "q1"})
    output.print_json_line({"id": "q2"})
    document, *lines = capsys.readouterr().out.split("\n}\n")
    assert json.loads(document + "}") == {"a": "é", "b": [1]}
    assert [json.loads(x) for x in lines[0].splitlines()] == [{"id": "q1"}, {"id": "q2"}]
