"""flows.progress: a line on stderr where no terminal shows a bar, at most one per interval, each source's end."""

from __future__ import annotations

from cairn.flows import progress


def test_lines_report_each_sources_end_and_throttle_in_between(capsys):
    progress.set_progress_display("lines")
    display = progress.start()
    display.update("wiki", 1, 3)  # within the interval: silent
    display.update("wiki", 3, 3)  # the end of a source: always said
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("cairn: wiki: 3/3 documents (")
    display.every = 0.0
    display.update("git", 1, 4)
    line = capsys.readouterr().err
    assert "git: 1/4 documents" in line and "s left)" in line  # mid-source: the time left at this rate
    progress.set_progress_display("off")
    silent = progress.start()
    silent.update("wiki", 3, 3)
    assert capsys.readouterr().err == ""


def test_a_sources_work_is_said_before_its_first_batch(capsys):
    progress.set_progress_display("lines")
    display = progress.start()
    display.update("wiki", 0, 17)  # the plan is known: said at once, whatever the interval
    display.update("empty", 0, 0)  # nothing to index: nothing to say
    assert capsys.readouterr().err == "cairn: wiki: 0/17 documents to index\n"
    progress.set_progress_display("off")
