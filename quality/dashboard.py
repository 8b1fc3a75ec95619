"""The report page (index.html), a dashboard read top-down: the verdict, when, which index and what the run
covered; each source's health; each banded figure's distribution against its SLA band; the trend of full
reports; then the least healthy sections and every expectation, failures first, folded.

A pure function of the report (results, per-source figures, when, where, scope), the distributions the banded
expectations judged (quality/figures.py) and a title. Everything is inline (styles, SVG charts): the page makes
no request, so it reads the same offline, from a copy or from the uploaded folder.
"""

from __future__ import annotations

import html
from dataclasses import replace
from typing import TYPE_CHECKING

from cairn.quality.checks import Result
from cairn.quality.figures import Distribution
from cairn.quality.plots import FAIL, PASS, Panel, histogram, trend_chart

if TYPE_CHECKING:
    from cairn.quality.report_folder import QualityReport

DATA_DOCS = "gx/uncommitted/data_docs/local_site/index.html"
SMALL_WIDTH, SMALL_HEIGHT = 300, 150  # a distribution's panel in the grid, four to a row
HEADLINE_FAILURES = 5  # failed expectations named in the header; the rest are in the table
NUMERIC = ("unexpected", "rows")  # the expectation tables' right-aligned columns
NOUNS = {"full_text": "sections", "child": "children", "abstract": "abstracts", "health": "section health"}
STYLE = """
body{font:14px system-ui,sans-serif;margin:0 auto;padding:1em 2em;max-width:1200px;color:#222}
h1{font-size:1.2em;margin:.2em 0;color:#555}h2{font-size:1.15em;margin:1.4em 0 .4em}
h3{font-size:1em;margin:.8em 0 .2em}
header{border-left:8px solid var(--verdict);padding:.4em 1em;margin-bottom:1em;background:#fafafa}
.verdict{color:var(--verdict);font-size:2em;font-weight:700;margin:0}.verdict span{font-size:.5em;font-weight:400}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.1em 1em;margin:.5em 0}dt{color:#666}dd{margin:0}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;
vertical-align:top}tr.bad{background:#fdecea}td.n{text-align:right;font-variant-numeric:tabular-nums}
.legend{color:#555;font-size:.92em;max-width:75em}.grid{display:grid;grid-template-columns:repeat(4,1fr);gap:4px}
svg{max-width:100%;height:auto}summary{cursor:pointer;font-weight:600;margin:.6em 0}.bad-text{color:#c62828}
"""


def render_html(report: QualityReport, title: str, distributions: list[Distribution]) -> str:
    """The page: header (verdict, when, index, scope, what failed), sources, distributions, trend, least healthy
    sections, expectations (failed open, passed folded), and a link to great-expectations' Data Docs."""
    page = [
        '<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width">',
        f'<link rel="icon" href="data:,"><title>{html.escape(title)}</title><style>{STYLE}</style>',
        header(report, title),
        sources(report),
        charts(distributions, report.results),
        trend(report),
        least_healthy(report),
        expectations(report.results),
        f'<footer><p class="legend">summary.json beside this page holds every figure shown here. great-expectations\' '
        f'own Data Docs: <a href="{DATA_DOCS}">{DATA_DOCS}</a> (a second page, which loads its styles from the web: '
        "offline it shows unstyled).</p></footer>",
    ]
    return "\n".join(page) + "\n</html>\n"


def header(report: QualityReport, title: str) -> str:
    failed = report.failed()
    named = "".join(
        f"<li>{html.escape(r.suite)}: {html.escape(r.column)}, {r.unexpected_percent:.1f}% unexpected "
        f"({html.escape(r.describe_params())})</li>"
        for r in failed[:HEADLINE_FAILURES]
    )
    more = (
        f"<li>and {len(failed) - HEADLINE_FAILURES} more (Expectations, below)</li>"
        if len(failed) > HEADLINE_FAILURES
        else ""
    )
    scope = report.scope.get("description", "")
    meta = [("written", report.written_at), ("index", report.index), ("scope", scope)]
    return (
        f'<header style="--verdict:{PASS if report.success else FAIL}"><h1>{html.escape(title)}</h1>'
        f'<p class="verdict" id="verdict">{"PASSED" if report.success else "FAILED"} '
        f"<span>{len(failed)} of {len(report.results)} expectations failed over {report.rows} rows, "
        f"{len(report.per_source)} source(s)</span></p>"
        + "<dl>"
        + "".join(f"<dt>{name}</dt><dd>{html.escape(value)}</dd>" for name, value in meta if value)
        + "</dl>"
        + (f'<ul class="bad-text">{named}{more}</ul>' if failed else "")
        + "</header>"
    )


def sources(report: QualityReport) -> str:
    rows = "".join(
        f"<tr class={'bad' if v['failed'] else 'ok'}><td>{html.escape(name)}</td>"
        f"<td>{'✘' if v['failed'] else '✔'}</td><td class=n>{v['rows']}</td><td class=n>{v['documents']}</td>"
        f"<td class=n>{v['checks'] - len(v['failed'])} of {v['checks']}</td><td class=n>{_share(v)}</td>"
        f"<td class=n>{_mean(v)}</td><td>{html.escape('; '.join(v['failed']))}</td></tr>"
        for name, v in sorted(report.per_source.items())
    )
    headers = ("source", "", "rows", "documents", "checks passed", "healthy sections", "mean health", "failed")
    return (
        '<section id="sources"><h2>Sources</h2>'
        + _table(headers, rows, headers[2:7])
        + '<p class="legend"><b>Chunk health</b> is a number from 0 to 1 for each section (chunkers/health.py): '
        "1.0 is a section inside the parent token band, not split, not merged from many headings, with its "
        "abstract and children inside their bands. It is a product of factors: a section half as long as the "
        "band's floor, or twice its ceiling, scores 0.5 from its size alone; a split multiplies it by 0.9, an "
        "abstract outside its band by 0.9, children outside theirs by down to 0.8. <b>Healthy sections</b> is the "
        "share scoring at least the health threshold; the health check passes when it is at least its "
        f"<i>mostly</i> share in each content type ({_thresholds(report)}). <b>Good</b>: every check passed, and "
        "a mean near 1. Only the sections the check judges count: a whole document shorter than the band is one "
        "section by necessity and exempt.</p></section>"
    )


def _share(figures: dict) -> str:
    fit = figures.get("health_fit")
    return f"{fit * 100:.0f}% of {figures.get('sections', 0)}" if fit is not None else "no sections"


def _mean(figures: dict) -> str:
    mean = figures.get("health_mean")
    return f"{mean:.2f}" if mean is not None else ""


def _thresholds(report: QualityReport) -> str:
    """What the report's health checks asked: "at least 0.5 for 90%" (and the others, per suite)."""
    used: dict[str, list[str]] = {}
    for r in report.results:
        if r.column == "chunk_health_score":
            asked = f"at least {r.params.get('min_value', 0):g} for {r.params.get('mostly', 1) * 100:.0f}%"
            used.setdefault(asked, []).append(r.suite)
    if not used:
        return "no sections judged here"
    common = max(used, key=lambda k: len(used[k]))
    others = "".join(f"; {k} for {', '.join(suites)}" for k, suites in sorted(used.items()) if k != common)
    return f"here {common}{others}"


def panel(d: Distribution, result: Result | None, xlabel: str = "") -> Panel:
    """The histogram of one distribution: its band shaded (health: the threshold dashed), the title red when its
    expectation failed."""
    low, high = d.band
    failed = result is not None and not result.success
    noun = NOUNS[d.kind]
    exempt = f", {d.exempt} exempt" if d.exempt else ""
    judged = (
        f"{d.inside * 100:.0f}% of {len(d.values)} " + (f"≥ {low:g}" if d.kind == "health" else "in band")
        if d.values
        else "none judged"
    )
    title = f"{'✘ ' if failed else ''}{noun}: {judged}"
    tokens = Panel(d.values, title, xlabel or f"tokens{exempt}", "#1565c0", 30, title_color=FAIL if failed else "#222")
    if d.kind == "health":  # a score in [0, 1] against its threshold, dashed
        return replace(
            tokens,
            xlabel=xlabel or f"score{exempt}",
            color="#6a1b9a",
            bins=20,
            value_range=(0.0, 1.0),
            line=low,
            line_label=f"threshold {low:g} dashed",
        )
    return replace(tokens, band=(low, high), band_label=f"SLA {low:g}-{high:g}")  # tokens against their band


def charts(distributions: list[Distribution], results: list[Result]) -> str:
    suites: dict[str, list[Distribution]] = {}
    for d in distributions:
        suites.setdefault(d.suite, []).append(d)
    rows = "".join(
        f'<h3>{html.escape(suite)}</h3><div class="grid">'
        + "".join(histogram(panel(d, d.result(results)), SMALL_WIDTH, SMALL_HEIGHT) for d in ds)
        + "</div>"
        for suite, ds in suites.items()
    )
    return (
        '<section id="charts"><h2>Token counts and health against their bands</h2><p class="legend">One row per '
        "source and content type: sections (parent chunks), children and abstracts by token count, the SLA band "
        "shaded, and the sections' chunk health, its threshold dashed. Each panel holds the rows its expectation "
        "judges (exempt rows are counted, not drawn); its title says the share inside the band and is red when the "
        "expectation failed (it allows its mostly share outside).</p>" + (rows or "<p>No rows.</p>") + "</section>"
    )


def trend(report: QualityReport) -> str:
    points = report.trend
    intro = (
        '<section id="trend"><h2>Trend of full reports</h2><p class="legend">The last full reports (every current '
        "row; a report of one source, one tenant or one ingest counts other rows and is left out), oldest left; a "
        "dot is green for a report that passed, red for one that failed."
        + ("" if report.scope.get("kind") == "full" else " This report is not a full one, so it is not among them.")
        + "</p>"
    )
    if len(points) < 2:
        return intro + "<p>Fewer than two full reports yet: <code>cairn report</code> writes one.</p></section>"
    measures = [("failed", "failed expectations"), ("rows", "rows"), ("health_mean", "mean chunk health")]
    return intro + trend_chart(points, measures) + "</section>"


def least_healthy(report: QualityReport) -> str:
    worst = report.health.get("worst", [])
    rows = "".join(
        f"<tr><td class=n>{w['score']}</td><td>{html.escape(str(w['locator']))}</td>"
        f"<td>{html.escape(str(w['section_id']))}</td>"
        f"<td class=n>{w['token_count']}</td><td class=n>{w['merge_count']}</td>"
        f"<td class=n>{w['split_count']}</td></tr>"
        for w in worst
    )
    return (
        f'<section id="least-healthy"><details><summary>The {len(worst)} least healthy sections judged</summary>'
        + _table(
            ("score", "document", "section", "tokens", "merges", "splits"),
            rows,
            ("score", "tokens", "merges", "splits"),
        )
        + "</details></section>"
    )


def expectations(results: list[Result]) -> str:
    failed = [r for r in results if not r.success]
    passed = [r for r in results if r.success]
    headers = ("", "suite", "check", "expectation", "parameters", "unexpected", "rows", "examples")
    return (
        '<section id="expectations"><h2>Expectations</h2>'
        + (
            f"<details open><summary>Failed ({len(failed)})</summary>"
            f"{_table(headers, _rows(failed), NUMERIC)}</details>"
            if failed
            else "<p>None failed.</p>"
        )
        + f"<details><summary>Passed ({len(passed)})</summary>"
        + '<p class="legend">"no rows": the check had nothing to judge, so it passes.</p>'
        + _table(headers, _rows(passed), NUMERIC)
        + "</details></section>"
    )


def _rows(results: list[Result]) -> str:
    rows = []
    for r in sorted(results, key=lambda r: (r.suite, r.column)):
        examples = "<br>".join(
            html.escape(
                f"{e.get('locator') or e.get('document_id')} #{e.get('section_id')} ({e.get('token_count')} tokens)"
            )
            for e in r.examples
        )
        mark = "✘" if not r.success else "no rows" if r.element_count == 0 else "✔"  # a check of nothing passes
        rows.append(
            f"<tr class={'ok' if r.success else 'bad'}><td>{mark}</td><td>{html.escape(r.suite)}</td>"
            f"<td>{html.escape(r.column)}</td><td>{html.escape(r.expectation)}</td>"
            f"<td>{html.escape(r.describe_params())}</td>"
            f"<td class=n>{r.unexpected_percent:.2f}%</td><td class=n>{r.element_count}</td><td>{examples}</td></tr>"
        )
    return "".join(rows)


def _table(headers: tuple[str, ...], body: str, numeric: tuple[str, ...] = ()) -> str:
    """An HTML table: one header row (the `numeric` columns' headers right-aligned, as their cells), then `body`
    (its rows, already rendered)."""
    cells = "".join(f"<th class=n>{h}</th>" if h in numeric else f"<th>{h}</th>" for h in headers)
    return f"<table><tr>{cells}</tr>{body}</table>"
