"""The report's SVG histograms: well-formed, every value counted once, bars scaled and placed inside."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from cairn.quality.plots import BOTTOM, LEFT, PANEL_HEIGHT, RIGHT, TOP, WIDTH, Panel, figure

SVG = "{http://www.w3.org/2000/svg}"


def bars(root) -> list[tuple[ET.Element, int]]:
    """(rect, count) for each bar: bars carry a "lo-hi: count" tooltip, the band a label."""
    out = []
    for rect in root.iter(f"{SVG}rect"):
        match = re.fullmatch(r"[-\d.]+-[-\d.]+: (\d+)", rect.find(f"{SVG}title").text)
        if match:
            out.append((rect, int(match.group(1))))
    return out


def test_every_value_is_in_one_bar_and_the_tallest_fills_the_panel():
    values = [120, 130, 130, 450, 460, 470, 480, 880, 1200]
    root = ET.fromstring(
        figure(
            [
                Panel(
                    values=values,
                    title='tokens <&> of "w"',
                    xlabel="tokens",
                    color="#1565c0",
                    bins=40,
                    band=(400, 900),
                    band_label="SLA 400-900",
                )
            ]
        )
    )
    assert root.get("viewBox") == f"0 0 {WIDTH} {PANEL_HEIGHT}"
    found = bars(root)
    assert sum(count for _, count in found) == len(values)
    heights = {count: float(rect.get("height")) for rect, count in found}
    plot_h = PANEL_HEIGHT - TOP - BOTTOM
    assert heights[max(heights)] == plot_h and abs(heights[1] - plot_h / max(heights)) < 0.1
    for rect, _ in found:
        x, y, w, h = (float(rect.get(k)) for k in ("x", "y", "width", "height"))
        assert LEFT <= x and x + w <= WIDTH - RIGHT + 1 and TOP <= y and y + h <= PANEL_HEIGHT - BOTTOM + 0.1
    band = next(r for r in root.iter(f"{SVG}rect") if r.find(f"{SVG}title").text == "SLA 400-900")
    scale = (WIDTH - LEFT - RIGHT) / (1200 - 120)
    assert abs(float(band.get("x")) - (LEFT + (400 - 120) * scale)) < 0.1
    assert abs(float(band.get("width")) - 500 * scale) < 0.1
    assert 'tokens <&> of "w"' in [t.text for t in root.iter(f"{SVG}text")]


def test_panels_stack_and_a_fixed_range_keeps_its_ends():
    root = ET.fromstring(
        figure(
            [
                Panel(
                    values=[0.2, 0.4],
                    title="a",
                    xlabel="score",
                    color="#000",
                    bins=20,
                    value_range=(0.0, 1.0),
                    line=0.3,
                ),
                Panel(
                    values=[5, 5, 5, float("nan")], title="b", xlabel="tokens", color="#000", bins=10
                ),  # one value, a gap
            ]
        )
    )
    assert root.get("height") == str(2 * PANEL_HEIGHT)
    second = [rect for rect, _ in bars(root) if float(rect.get("y")) >= PANEL_HEIGHT]
    assert sum(count for rect, count in bars(root) if rect in second) == 3
    ticks = [t.text for t in root.iter(f"{SVG}text")]
    assert ticks[ticks.index("a") + 1 :][:5] == ["0", "0.25", "0.5", "0.75", "1"]
    threshold = next(root.iter(f"{SVG}line"))
    assert abs(float(threshold.get("x1")) - (LEFT + 0.3 * (WIDTH - LEFT - RIGHT))) < 0.1
