"""The report's charts as SVG, drawn directly: bar charts and lines do not need a plotting library (matplotlib
took 0.3-0.5 s a report, a third of the report on a small run, and a heavy dependency). The page inlines them,
so it needs no other file and makes no request.

A histogram panel has an optional shaded band (the SLA) and dashed line (a threshold), a title, five x ticks and
the tallest bar's count; `figure` stacks panels into one SVG file. `trend_chart` draws a few measures of the
last reports as lines over the same x axis, each point coloured by its verdict.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np

WIDTH, PANEL_HEIGHT = 720, 190
LEFT, RIGHT, TOP, BOTTOM = 48, 16, 28, 40
PASS, FAIL, BAND = "#2e7d32", "#c62828", "#2e7d32"


@dataclass
class Panel:
    values: list[float]
    title: str
    xlabel: str
    color: str
    bins: int
    value_range: tuple[float, float] | None = None  # default: the values' range, widened to the band
    band: tuple[float, float] | None = None
    band_label: str = ""
    line: float | None = None
    line_label: str = ""
    title_color: str = "#222"


def _finite(panel: Panel) -> np.ndarray:
    values = np.asarray(panel.values, dtype=float)
    return values[np.isfinite(values)]  # a row missing its value is a failed check, not a plotting error


def _range(panel: Panel, values: np.ndarray) -> tuple[float, float]:
    if panel.value_range:
        return panel.value_range
    points = [*values.tolist(), *(panel.band or ())]
    lo, hi = (min(points), max(points)) if points else (0.0, 1.0)
    return (lo, hi) if hi > lo else (lo - 0.5, hi + 0.5)


def _tick(value: float) -> str:
    return f"{value:.0f}" if abs(value) >= 10 else f"{value:.2f}".rstrip("0").rstrip(".")


def _svg(width: int, height: int, body: str, label: str = "") -> str:
    aria = f' role="img" aria-label="{html.escape(label)}"' if label else ""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'font-family="system-ui,sans-serif" fill="#222"{aria}>{body}</svg>'
    )


def _panel(panel: Panel, y: int, width: int = WIDTH, height: int = PANEL_HEIGHT) -> str:
    values = _finite(panel)
    lo, hi = _range(panel, values)
    counts, edges = np.histogram(values, bins=panel.bins, range=(lo, hi))
    plot_w, plot_h = width - LEFT - RIGHT, height - TOP - BOTTOM
    x_of = lambda v: LEFT + (float(v) - lo) / (hi - lo) * plot_w  # noqa: E731
    tallest = max(int(counts.max()) if counts.size else 0, 1)
    base = y + TOP + plot_h
    title_x, title_size = (LEFT, 13) if width >= 500 else (6, 12)  # a small panel's title takes its whole width
    parts = [
        f'<text x="{title_x}" y="{y + 18}" font-size="{title_size}" fill="{panel.title_color}">'
        f"{html.escape(panel.title)}</text>"
    ]
    if panel.band:
        a, b = (x_of(max(lo, panel.band[0])), x_of(min(hi, panel.band[1])))
        parts.append(
            f'<rect x="{a:.1f}" y="{y + TOP}" width="{max(b - a, 0):.1f}" height="{plot_h}" fill="{BAND}" '
            f'fill-opacity="0.12"><title>{html.escape(panel.band_label)}</title></rect>'
        )
    for count, left, right in zip(counts, edges[:-1], edges[1:]):
        if count:
            h = count / tallest * plot_h
            parts.append(
                f'<rect x="{x_of(left):.1f}" y="{base - h:.1f}" width="{max(x_of(right) - x_of(left) - 1, 1):.1f}" '
                f'height="{h:.1f}" fill="{panel.color}"><title>{_tick(left)}-{_tick(right)}: {count}</title></rect>'
            )
    if panel.line is not None:
        x = x_of(panel.line)
        parts.append(
            f'<line x1="{x:.1f}" y1="{y + TOP}" x2="{x:.1f}" y2="{base}" stroke="{FAIL}" stroke-dasharray="5 4"/>'
        )
    parts.append(f'<line x1="{LEFT}" y1="{base}" x2="{width - RIGHT}" y2="{base}" stroke="#444"/>')
    for value in np.linspace(lo, hi, 5):
        x = x_of(value)
        parts.append(
            f'<line x1="{x:.1f}" y1="{base}" x2="{x:.1f}" y2="{base + 4}" stroke="#444"/>'
            f'<text x="{x:.1f}" y="{base + 16}" font-size="11" text-anchor="middle">{_tick(value)}</text>'
        )
    parts.append(
        f'<text x="{LEFT - 6}" y="{y + TOP + 10}" font-size="11" text-anchor="end">{tallest}</text>'
        f'<text x="{LEFT - 6}" y="{base}" font-size="11" text-anchor="end">0</text>'
    )
    legend = " · ".join(
        html.escape(label)
        for label in (panel.band_label if panel.band else "", panel.line_label if panel.line is not None else "")
        if label
    )
    parts.append(
        f'<text x="{LEFT + plot_w / 2:.0f}" y="{base + 32}" font-size="11" text-anchor="middle">'
        f"{html.escape(panel.xlabel)}{' (' + legend + ')' if legend else ''}</text>"
    )
    return "".join(parts)


def histogram(panel: Panel, width: int, height: int) -> str:
    """One panel as an SVG element of its own (the page lays them out in a grid)."""
    return _svg(width, height, _panel(panel, 0, width, height), panel.title)


def figure(panels: list[Panel]) -> str:
    """Panels stacked in one standalone SVG document (the report folder's .svg files)."""
    height = PANEL_HEIGHT * len(panels)
    body = "".join(_panel(panel, number * PANEL_HEIGHT) for number, panel in enumerate(panels))
    return _svg(WIDTH, height, body) + "\n"


def trend_chart(points: list[dict], measures: list[tuple[str, str]], width: int = 1000, row: int = 96) -> str:
    """`measures` ([(key, title)]) of each point as a line, one row per measure over a shared x axis (one step a
    point, oldest left), each point a dot green for a passing report and red for a failing one, with its value
    and its report's name on hover; the x axis labelled with each report's time (its folder name's start)."""
    step = (width - LEFT - RIGHT) / max(len(points) - 1, 1)
    xs = [LEFT + (i * step if len(points) > 1 else (width - LEFT - RIGHT) / 2) for i in range(len(points))]
    parts = [
        _measure(points, key, title, xs, (number * row + TOP, row - TOP - 8))
        for number, (key, title) in enumerate(measures)
    ]
    base = len(measures) * row
    for i, point in enumerate(points):
        anchor = "start" if i == 0 and len(points) > 1 else "end" if i == len(points) - 1 else "middle"
        parts.append(
            f'<text x="{xs[i]:.1f}" y="{base + 6}" font-size="11" text-anchor="{anchor}">'
            f"{html.escape(report_time(str(point.get('report', ''))))}</text>"
        )
    return _svg(width, base + 14, "".join(parts), "trend of the last full reports")


def _measure(points: list[dict], key: str, title: str, xs: list[float], box: tuple[int, int]) -> str:
    """One row of the trend: the values of `key` between the lowest and highest, in the `box` (top, height)."""
    top, plot_h = box
    values = [p.get(key) for p in points]
    known = [float(v) for v in values if v is not None]
    lo, hi = (min(known), max(known)) if known else (0.0, 1.0)
    lo, hi = (lo, hi) if hi > lo else (lo - 1 if lo >= 1 else 0.0, hi + 1)

    def y_of(value: float) -> float:
        return top + plot_h - (float(value) - lo) / (hi - lo) * plot_h

    parts = [
        f'<text x="{LEFT}" y="{top - 10}" font-size="13">{html.escape(title)}</text>'
        f'<text x="{LEFT - 6}" y="{top + 10}" font-size="11" text-anchor="end">{_tick(hi)}</text>'
        f'<text x="{LEFT - 6}" y="{top + plot_h}" font-size="11" text-anchor="end">{_tick(lo)}</text>'
        f'<line x1="{LEFT}" y1="{top + plot_h}" x2="{xs[-1] if xs else LEFT}" y2="{top + plot_h}" stroke="#bbb"/>'
    ]
    line = [f"{x:.1f},{y_of(v):.1f}" for x, v in zip(xs, values) if v is not None]
    if len(line) > 1:
        parts.append(f'<polyline points="{" ".join(line)}" fill="none" stroke="#607d8b" stroke-width="1.5"/>')
    for x, point, value in zip(xs, points, values):
        if value is None:
            continue
        verdict, colour = ("passed", PASS) if point.get("success") else ("FAILED", FAIL)
        parts.append(
            f'<circle cx="{x:.1f}" cy="{y_of(value):.1f}" r="4" fill="{colour}">'
            f"<title>{html.escape(str(point.get('report', '')))}: {html.escape(title)} {_tick(float(value))}, "
            f"{verdict}</title></circle>"
        )
    return "".join(parts)


def report_time(name: str) -> str:
    """`20261127T105906Z-report-all` -> `11-27 10:59` (a report folder's name starts with its UTC time)."""
    stamp = name.split("-", 1)[0]
    if len(stamp) == 16 and stamp[8] == "T":
        return f"{stamp[4:6]}-{stamp[6:8]} {stamp[9:11]}:{stamp[11:13]}"
    return name[:12]
