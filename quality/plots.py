"""The report's plots as standalone SVG histograms, drawn directly: two bar charts do not need a plotting
library (matplotlib took 0.3-0.5 s a report, a third of the report on a small run, and a heavy dependency).

A figure is a column of panels; each panel is a histogram with an optional shaded band (the SLA) or
dashed line (a threshold), a title, five x ticks and the tallest bar's count.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np

WIDTH, PANEL_HEIGHT = 720, 190
LEFT, RIGHT, TOP, BOTTOM = 48, 16, 28, 40


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


def _panel(panel: Panel, y: int) -> str:
    values = _finite(panel)
    lo, hi = _range(panel, values)
    counts, edges = np.histogram(values, bins=panel.bins, range=(lo, hi))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, PANEL_HEIGHT - TOP - BOTTOM
    x_of = lambda v: LEFT + (float(v) - lo) / (hi - lo) * plot_w  # noqa: E731
    tallest = max(int(counts.max()) if counts.size else 0, 1)
    base = y + TOP + plot_h
    parts = [f'<text x="{LEFT}" y="{y + 18}" font-size="13">{html.escape(panel.title)}</text>']
    if panel.band:
        a, b = (x_of(max(lo, panel.band[0])), x_of(min(hi, panel.band[1])))
        parts.append(
            f'<rect x="{a:.1f}" y="{y + TOP}" width="{max(b - a, 0):.1f}" height="{plot_h}" fill="#2e7d32" '
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
            f'<line x1="{x:.1f}" y1="{y + TOP}" x2="{x:.1f}" y2="{base}" stroke="#c62828" stroke-dasharray="5 4"/>'
        )
    parts.append(f'<line x1="{LEFT}" y1="{base}" x2="{WIDTH - RIGHT}" y2="{base}" stroke="#444"/>')
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


def figure(panels: list[Panel]) -> str:
    height = PANEL_HEIGHT * len(panels)
    body = "".join(_panel(panel, number * PANEL_HEIGHT) for number, panel in enumerate(panels))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" '
        f'font-family="system-ui,sans-serif" fill="#222">{body}</svg>\n'
    )
