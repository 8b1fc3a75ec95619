"""The data-quality report page in a real headless Chromium (tests/browser.py): it renders, the verdict is above the
fold, its charts are drawn, and it asks for nothing but itself."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import pytest

from cairn.chunkers import chunk_document
from cairn.embedding import load_encoder
from cairn.index.cache import EmbeddingCache
from cairn.index.rows import ChunkedDocument, build_rows
from cairn.quality.frames import to_frame
from cairn.quality.worker import report_writer
from cairn.schemas import ContentType, SourceDocument, SourceType, stable_id
from cairn.schemas.config import load_config
from cairn.schemas.row_figures import figures
from tests.browser import Browser, chromium_or_skip
from tests.conftest import write_config

WIDTH, HEIGHT = 1280, 800  # a laptop's first screen
PARAGRAPH = (
    "Operators confirm replication lag on every standby before promoting one of them, record each action in the "
    "incident channel, and check error rate, latency and saturation before and after the change. "
)
EXTERNAL = (
    '<!doctype html><link rel="stylesheet" href="https://cdn.example.com/site.css">'
    '<p id="verdict">control</p><img src="http://example.org/logo.png">'
)


def document(source: str, n: int, paragraphs: int) -> SourceDocument:
    body = f"# {source} guide {n}\n\n" + "".join(
        f"## Part {part}\n\n" + "\n\n".join(PARAGRAPH * 3 for _ in range(paragraphs)) + "\n\n" for part in range(3)
    )
    return SourceDocument(
        document_id=stable_id(source, str(n)),
        source_name=source,
        source_type=SourceType.WIKI,
        source_uri=f"file:///{source}/{n}.md",
        locator=f"{n}.md",
        title=f"{source} guide {n}",
        content=body,
        tenant_id="acme",
        access_control_list=["sre"],
        content_type=ContentType.RUNBOOK,
        version_hash=stable_id("v", source, str(n)),
        created_at=1,
        updated_at=1,
        temporal_start=1,
    )


@pytest.fixture
def report_page(tmp_path) -> Path:
    """A real report (real chunker, model, great-expectations) over two sources, one section over its band."""
    config = load_config(write_config(tmp_path / "c.toml", tmp_path / "index", []))
    write = report_writer()  # great-expectations in the checks' worker process, as a run uses it
    encoder = load_encoder(config.embedding.model)
    docs = [document("runbooks", n, 6) for n in range(3)] + [document("postmortems", n, 5) for n in range(2)]
    cache = EmbeddingCache(config.embedding.cache_path, encoder.dim)
    rows, _ = build_rows([ChunkedDocument(d, chunk_document(d, config.chunking)) for d in docs], encoder, cache, 64)
    cache.close()
    parent = next(r for r in rows if r.is_parent)
    frame = to_frame(figures(r) for r in [*rows, replace(parent, chunk_id="oversized", token_count=2400)])
    report = write(frame, config, encoder.dim, "report-all", "Cairn data quality: all")
    assert not report.success
    return Path(report.report_dir, "index.html")


@pytest.mark.core
def test_the_report_page_renders_its_verdict_above_the_fold_and_asks_for_nothing_but_itself(report_page, tmp_path):
    from PIL import Image

    control = tmp_path / "external.html"
    control.write_text(EXTERNAL, encoding="utf-8")
    with Browser(chromium_or_skip()) as browser:
        # the probe sees what a page asks of the web when it does (and nothing of it is fetched)
        seen = browser.load(control.as_uri(), WIDTH, HEIGHT).requests
        assert seen == [control.as_uri(), "https://cdn.example.com/site.css", "http://example.org/logo.png"]

        page = browser.load(report_page.as_uri(), WIDTH, HEIGHT)
        assert page.requests == [report_page.as_uri()]
        verdict = page.evaluate(
            "(() => { const v = document.getElementById('verdict'), r = v.getBoundingClientRect();"
            " return {text: v.innerText, top: r.top, bottom: r.bottom, colour: getComputedStyle(v).color}; })()"
        )
        charts = page.evaluate(
            "[...document.querySelectorAll('#charts svg')].map(s => s.getBoundingClientRect().width)"
        )
        folded = page.evaluate("[...document.querySelectorAll('#expectations details')].map(d => d.open)")
        screenshot = Image.open(io.BytesIO(page.screenshot())).convert("RGB")

    assert verdict["text"].startswith("FAILED 1 of ") and 0 <= verdict["top"] < verdict["bottom"] <= HEIGHT / 3
    assert verdict["colour"] == "rgb(198, 40, 40)"
    assert len(charts) >= 8 and min(charts) > 200  # four panels a row for each source's content type
    assert folded == [True, False]  # failed expectations open, passed ones folded
    assert screenshot.size == (WIDTH, HEIGHT)
    colours = screenshot.getcolors(maxcolors=1 << 20) or []
    assert len(colours) > 50  # text, table rules and charts, not a blank page
    top = screenshot.crop((0, int(verdict["top"]), WIDTH // 2, int(verdict["bottom"])))
    assert (198, 40, 40) in {colour for _, colour in top.getcolors(maxcolors=1 << 20) or []}  # the red verdict
