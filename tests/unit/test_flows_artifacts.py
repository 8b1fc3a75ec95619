"""The run report as a Prefect markdown artifact: what documents and errors say stays text."""

from markdown_it import MarkdownIt

from cairn.flows.artifacts import run_markdown
from cairn.schemas.run_report import RunReport, SourceReport

HOSTILE = "[click](javascript:alert(1))<img src=x onerror=alert(1)>|pipe\n## heading `code` *em* &lt;b&gt; \\"


def test_names_and_errors_from_documents_are_shown_as_text_in_their_own_cells():
    part = SourceReport()
    part.fail("wiki", HOSTILE + ".md", "cannot parse " + HOSTILE)
    part.warn("wiki", "ok.md", HOSTILE)
    report = RunReport(run_id="r1")
    report.close_source("wiki", part)
    html = MarkdownIt("commonmark").enable("table").render(run_markdown(report))
    assert "<a " not in html and "<img" not in html and "<h2" not in html and "<code" not in html and "<em" not in html
    rows = [r for r in html.split("<tr>") if "wiki" in r]
    assert len(rows) == 2 and all(r.count("<td>") == 3 for r in rows)  # the pipe did not split a cell
    shown = " ".join(HOSTILE.split()).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert shown in html  # every character still there, as text
