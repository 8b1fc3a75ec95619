"""The report page as a dashboard: verdict, time, index and scope first; each source's health with its legend;
every banded figure charted against its band; the trend; the expectations last, failures first and open; and
nothing fetched from anywhere."""

from __future__ import annotations

import re

import pandas as pd

from cairn.quality import scope
from cairn.quality.checks import Result
from cairn.quality.dashboard import render_html
from cairn.quality.expectations import bands, scoped, size_checks
from cairn.quality.figures import distributions, health_summary, source_summary
from cairn.quality.report_folder import QualityReport
from cairn.schemas.config import CairnConfig

BETWEEN = "expect_column_values_to_be_between"


def section(source, tokens, abstract=150, health=1.0, whole=False, content_type="runbook", n=[0]) -> dict:  # noqa: B006
    n[0] += 1
    return {
        "chunk_id": f"p{n[0]}",
        "document_id": f"d{n[0]}",
        "section_id": f"s{n[0]}",
        "locator": f"{source}/{n[0]}.md",
        "source_name": source,
        "content_type": content_type,
        "chunk_type": "full_text",
        "token_count": tokens,
        "abstract_token_count": abstract,
        "chunk_health_score": health,
        "whole_document": whole,
        "is_remainder": False,
        "merge_count": 0,
        "split_count": 0,
    }


def child(source, tokens, remainder=False, content_type="runbook") -> dict:
    return {
        **section(source, tokens, content_type=content_type),
        "chunk_type": "child",
        "abstract_token_count": None,
        "chunk_health_score": None,
        "is_remainder": remainder,
    }


def with_masks(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows with the `checked` mask validate gives them: here the size checks' slots (what the figures read)."""
    masks = pd.Series(0, index=rows.index, dtype="int64")
    for (source, content_type), typed in rows.groupby(["source_name", "content_type"]):
        b = bands(config(), source, content_type)
        for check in size_checks(b):
            masks[typed.index[check.looked_at(scoped(typed, b))]] |= 1 << check.slot
    return rows.assign(checked=masks, failed=0)


def frame() -> pd.DataFrame:
    return with_masks(
        pd.DataFrame(
            [
                section("wiki", 500),
                section("wiki", 800, health=0.9),
                section("wiki", 60, abstract=60, health=0.15, whole=True),  # a short page: exempt where it cannot fit
                section("wiki", 1800, health=0.45),  # judged, unhealthy
                child("wiki", 150),
                child("wiki", 20, remainder=True),
                section("incidents", 300, health=0.75, content_type="incident"),
            ]
        )
    )


def results(failed_health: bool = False) -> list[Result]:
    return [
        Result("wiki", "expect_column_values_to_not_be_null", "tenant_id", True, 0.0, 7),
        Result("wiki.runbook", BETWEEN, "full_text token_count", True, 0.0, 3, params={"min_value": 400}),
        Result("wiki.runbook", BETWEEN, "abstract_token_count", False, 33.3, 3, params={"min_value": 100}),
        Result("wiki.runbook", BETWEEN, "child token_count", True, 0.0, 0),
        Result(
            "wiki.runbook",
            BETWEEN,
            "chunk_health_score",
            not failed_health,
            33.3,
            3,
            params={"min_value": 0.5, "max_value": 1.0, "mostly": 0.9},
        ),
        Result(
            "incidents.incident",
            BETWEEN,
            "chunk_health_score",
            True,
            0.0,
            1,
            params={"min_value": 0.4, "max_value": 1.0, "mostly": 0.9},
        ),
    ]


def config() -> CairnConfig:
    return CairnConfig.model_validate(
        {"quality": {"overrides": {"incident": {"parent_min_tokens": 150, "health_min": 0.4}}}}
    )


def report(checked: list[Result], what: scope.Scope, trend: list[dict] | None = None) -> tuple[QualityReport, list]:
    rows, cfg = frame(), config()
    figures = distributions(rows, cfg)
    built = QualityReport(
        success=all(r.success for r in checked),
        report_dir="/reports/x",
        rows=len(rows),
        results=checked,
        health=health_summary(rows),
        per_source=source_summary(rows, checked, figures),
        trend=trend or [],
        written_at="2026-11-27 10:59:06 UTC",
        index="collection cairn at data/index/cairn.db",
        scope=what.to_dict(),
    )
    return built, figures


def page(checked=None, what=None, trend=None) -> str:
    built, figures = report(checked or results(), what or scope.full_report(), trend)
    return render_html(built, "Cairn data quality: all", figures)


def test_the_header_says_the_verdict_when_which_index_and_what_the_run_covered_before_anything_else():
    html = page(what=scope.after_ingest("08b26b9a-1111", {"wiki": ["d1", "d2"], "incidents": ["d9"]}))
    header = html[html.index("<header") : html.index("</header>")]
    assert re.search(r'id="verdict">FAILED <span>1 of 6 expectations failed over 7 rows', header)
    assert "<dt>written</dt><dd>2026-11-27 10:59:06 UTC</dd>" in header
    assert "<dt>index</dt><dd>collection cairn at data/index/cairn.db</dd>" in header
    assert "after run 08b26b9a: the 3 document(s) it wrote in incidents, wiki" in header
    assert "wiki.runbook: abstract_token_count, 33.3% unexpected" in header  # what failed, named at the top
    assert html.index("</header>") < html.index('id="sources"')


def test_the_sections_come_in_order_and_the_expectations_last():
    html = page()
    order = [html.index(f'<section id="{name}"') for name in ("sources", "charts", "trend", "expectations")]
    assert order == sorted(order)
    assert html.rindex("<section") == html.index('<section id="expectations"')


def test_failed_expectations_come_first_and_open_passed_ones_folded_and_a_check_of_nothing_is_not_ticked():
    html = page()
    failed, passed = html.index("<details open><summary>Failed (1)"), html.index("<details><summary>Passed (5)")
    assert failed < passed

    def mark(check: str) -> tuple[str, str, int]:
        found = re.search(r"<tr class=(\w+)><td>([^<]*)</td><td>[^<]*</td><td>" + check + "</td>", html)
        assert found, check
        return found.group(1), found.group(2), found.start()

    assert mark("abstract_token_count")[:2] == ("bad", "✘") and mark("abstract_token_count")[2] < passed
    assert mark("child token_count")[:2] == ("ok", "no rows")
    assert mark("tenant_id")[:2] == ("ok", "✔")


def test_a_passing_report_says_none_failed():
    html = page(checked=[r for r in results() if r.success])
    assert "<p>None failed.</p>" in html and "<details open>" not in html and 'id="verdict">PASSED' in html


def test_each_banded_count_is_charted_with_its_band_over_the_rows_its_expectation_judges():
    html = page()
    charts = html[html.index('<section id="charts"') : html.index('<section id="trend"')]
    titles = re.findall(r"<svg [^>]*aria-label=\"([^\"]+)\"", charts)
    # incidents (parent band from 150) first; then wiki's sections 500, 800, 1800 (the short whole page exempt),
    # children (the remainder exempt), abstracts of sections of at least the abstract floor, health as the parents
    assert titles == [
        "sections: 100% of 1 in band",
        "abstracts: 100% of 1 in band",
        "section health: 100% of 1 ≥ 0.4",
        "sections: 67% of 3 in band",
        "children: 100% of 1 in band",
        "✘ abstracts: 100% of 3 in band",
        "section health: 67% of 3 ≥ 0.5",
    ]
    assert [charts.count(f"(SLA {band})") for band in ("150-900", "400-900", "100-200")] == [1, 1, 3]
    assert "tokens, 1 exempt (SLA 400-900)" in charts and "tokens, 1 exempt (SLA 100-200)" in charts


def test_the_band_is_shaded_where_its_bounds_fall_on_the_axis():
    html = page()
    wiki_sections = html.split("<h3>wiki.runbook</h3>", 1)[1].split("</svg>", 1)[0]
    band = re.search(r'<rect x="([\d.]+)" y="\d+" width="([\d.]+)"[^>]*fill-opacity="0.12"', wiki_sections)
    axis = re.findall(r'<text x="([\d.]+)" y="\d+" font-size="11" text-anchor="middle">(\d+)</text>', wiki_sections)
    x_of = {int(label): float(x) for x, label in axis}  # ticks from 400 (the band's floor) to 1800 (the largest)
    assert band and float(band.group(1)) == x_of[400]
    per_token = (x_of[1800] - x_of[400]) / 1400
    assert abs(float(band.group(2)) - 500 * per_token) < 0.2  # 400 to 900


def test_a_chart_whose_expectation_failed_has_a_red_title():
    html = page(checked=results(failed_health=True))
    assert re.search(r'fill="#c62828">✘ section health: 67% of 3 ≥ 0.5</text>', html)
    assert re.search(r'fill="#222">section health: 100% of 1 ≥ 0.4</text>', html)


def test_chunk_health_is_over_the_sections_its_check_judges_and_never_shown_without_its_legend():
    built, figures = report(results(), scope.full_report())
    wiki, incidents = built.per_source["wiki"], built.per_source["incidents"]
    # the short whole page (0.15) is exempt; 0.45 is under wiki's 0.5; incidents' 0.75 is over its 0.4
    assert (wiki["sections"], wiki["health_mean"], wiki["health_fit"]) == (3, round((1 + 0.9 + 0.45) / 3, 4), 0.6667)
    assert (incidents["sections"], incidents["health_fit"]) == (1, 1.0)
    assert built.health["sections"] == 4 and built.health["exempt"] == 1
    assert [w["score"] for w in built.health["worst"]][:1] == [0.45]
    html = render_html(built, "t", figures)
    sources = html[html.index('<section id="sources"') : html.index("</section>")]
    assert "<td class=n>67% of 3</td><td class=n>0.78</td>" in sources
    assert "<b>Chunk health</b> is a number from 0 to 1" in sources and "<b>Good</b>" in sources
    assert "here at least 0.5 for 90%; at least 0.4 for 90% for incidents.incident" in sources


def test_the_trend_is_a_chart_of_full_reports_with_failing_ones_in_red():
    points = [
        {"report": f"2026112{d}T000000Z-report-all", "success": d != 2, "rows": 100 + d, "failed": int(d == 2)}
        for d in (1, 2, 3)
    ]
    for point in points:
        point["health_mean"] = 0.9
    html = page(trend=points)
    trend = html[html.index('<section id="trend"') : html.index('<section id="least-healthy"')]
    assert trend.count("<circle") == 9 and trend.count('fill="#c62828"') == 3  # three measures of three reports
    assert ">11-21 00:00</text>" in trend and ">11-23 00:00</text>" in trend
    lone = page(trend=points[:1], what=scope.of("wiki", None))
    assert "Fewer than two full reports yet" in lone and "This report is not a full one" in lone


def test_the_page_needs_nothing_but_itself():
    html = page()
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", html)  # no resource from elsewhere
    assert "@import" not in html and "url(" not in html
    assert '<a href="gx/uncommitted/data_docs/local_site/index.html">' in html  # a link, not a load
    assert "<img" not in html and html.count("<svg") == 7  # the charts are inline
