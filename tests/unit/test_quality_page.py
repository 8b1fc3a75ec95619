"""The report page a person opens: when and for which index, the plots before the long table, and a check over
no rows said as such, not ticked."""

import re

from cairn.quality.checks import Result
from cairn.quality.report_folder import QualityReport, render_html


def test_the_page_says_when_and_where_puts_plots_first_and_does_not_tick_a_check_of_nothing():
    results = [
        Result("wiki", "expect_column_values_to_be_between", "full_text token_count", True, 0.0, 120),
        Result("wiki.legal", "expect_column_values_to_be_between", "child token_count", True, 0.0, 0),
        Result("wiki", "expect_column_values_to_not_be_null", "tenant_id", False, 2.5, 120),
    ]
    report = QualityReport(success=False, report_dir="/r/x", rows=120, results=results)
    page = render_html(
        report,
        "Cairn data quality: all",
        ["token_counts.svg"],
        "2026-11-26 20:00:00 UTC, collection cairn at data/index/cairn.db",
    )
    assert "<p>2026-11-26 20:00:00 UTC, collection cairn at data/index/cairn.db</p>" in page
    assert page.index("<h2>Plots</h2>") < page.index("<h2>Expectations</h2>")

    def mark(check: str) -> tuple[str, str]:
        found = re.search(r"<tr class=(\w+)><td>([^<]*)</td><td>[^<]*</td><td>" + check + "</td>", page)
        assert found, check
        return found.group(1), found.group(2)

    assert mark("child token_count") == ("ok", "no rows")
    assert mark("full_text token_count") == ("ok", "✔")
    assert mark("tenant_id") == ("bad", "✘")
