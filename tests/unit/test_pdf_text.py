"""The text-layer parser (sources/pdftext.py) on PDFs generated here, read in this process: the blocks it
cuts, their reading order on two-column and rotated pages, clause numbers joined to their text, the clause
structure the legal layout rebuilds from them, and pages without a text layer counted, not dropped."""

from __future__ import annotations

import pytest

from cairn.chunkers.legal import legal_units
from cairn.schemas.config import ChunkingConfig
from cairn.schemas.records import PAGE_BREAK
from cairn.sources.pdf import body_text
from cairn.sources.pdftext import read_document
from tests import pdf_factory, pdf_layouts


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory) -> dict:
    """Each layout written once for the module (rendering costs more than parsing)."""
    folder = tmp_path_factory.mktemp("layouts")
    writers = {
        "two": pdf_layouts.write_two_columns,
        "rotated": pdf_layouts.write_rotated,
        "margin": pdf_layouts.write_margin_numbers,
        "scan": pdf_layouts.write_partly_scanned,
        "sample": pdf_factory.write_sample,
    }
    return {name: write(folder / f"{name}.pdf") for name, write in writers.items()}


def _read(path) -> tuple[list[tuple[int, str]], list[int]]:
    status, payload = read_document(str(path), 10_000_000)
    assert status == "ok", payload
    return payload


def _page(blocks: list[tuple[int, str]], number: int) -> list[str]:
    return [text for page, text in blocks if page == number]


def test_each_clause_starts_a_block_and_wrapped_lines_join(pdfs):
    blocks, empty = _read(pdfs["two"])
    assert empty == []
    assert _page(blocks, 1)[1:4] == pdf_layouts.LEFT_COLUMN  # each paragraph wraps over two lines in its column


def test_two_columns_are_read_left_column_first_whatever_the_drawing_order(pdfs):
    blocks, _ = _read(pdfs["two"])
    assert _page(blocks, 1) == [
        "SUPPLY AGREEMENT TERMS AND CONDITIONS OF SALE",
        *pdf_layouts.LEFT_COLUMN,
        *pdf_layouts.RIGHT_COLUMN,
    ]


def test_pages_turned_by_rotate_or_drawn_at_an_angle_read_like_upright_ones(pdfs):
    blocks, _ = _read(pdfs["rotated"])
    upright = _page(blocks, 1)
    assert upright == pdf_layouts.LEFT_COLUMN
    assert _page(blocks, 2) == upright  # /Rotate 90
    angled = _page(blocks, 3)  # drawn at 90 degrees: same words, same order, each clause opening a block
    assert " ".join(angled) == " ".join(upright)
    assert sum(block.startswith(("1. ", "2. ", "3. ")) for block in angled) == 3


def test_numbers_drawn_apart_from_their_text_join_it_and_give_the_clause_structure(pdfs):
    blocks, _ = _read(pdfs["margin"])
    assert _page(blocks, 1) == [f"{number} {text}" for number, text in pdf_layouts.MARGIN_CLAUSES]
    units = legal_units("\n\n".join(text for _, text in blocks), ChunkingConfig())
    terms = {u.term: u.heading_path for u in units if u.term}
    assert terms == {"Affiliate": ("1. DEFINITIONS",), "Confidential Information": ("1. DEFINITIONS",)}
    clause_b = next(u for u in units if u.text.startswith("(b) A Party"))
    assert clause_b.heading_path[0] == "2. TERM AND TERMINATION" and clause_b.heading_path[1].startswith("2.1 ")
    assert clause_b.heading_path[2:] == ("(b)",) and clause_b.level == 3 and clause_b.section_start


def test_the_sample_contract_keeps_its_articles_sections_clauses_and_definitions(pdfs):
    blocks, _ = _read(pdfs["sample"])
    text = body_text(blocks, max(page for page, _ in blocks), [], "sample.pdf")
    units = legal_units(PAGE_BREAK.join("\n\n".join(page) for page in text.pages), ChunkingConfig())
    subclause = next(u for u in units if u.text.startswith("(i) the original Mortgage Note"))
    assert subclause.heading_path == (
        "ARTICLE II CONVEYANCE OF MORTGAGE LOANS",
        "Section 2.01 Conveyance of Mortgage Loans",
        "(a)",
        "(i)",
    )
    assert {"Accrual Period", "Business Day", "Closing Date", "Cut-off Date"} <= {u.term for u in units}
    assert not any("Confidential" in block or block.startswith("Page ") for page in text.pages for block in page)


def test_a_page_without_a_text_layer_is_counted_and_keeps_its_place(pdfs):
    blocks, empty = _read(pdfs["scan"])
    assert empty == [2]  # the blank page 3 draws nothing: blank, not scanned
    text = body_text(blocks, 4, empty, "scan.pdf")
    assert text.pages_without_text == [2]
    assert (
        text.pages[0] == pdf_layouts.LEFT_COLUMN and text.pages[1] == [] and text.pages[3] == pdf_layouts.RIGHT_COLUMN
    )


@pytest.mark.parametrize("limit", [50, 500])
def test_text_past_the_limit_stops_the_parse(pdfs, limit):
    status, chars = read_document(str(pdfs["margin"]), limit)
    assert status == "too-long" and chars > limit


def test_a_file_pdfium_cannot_open_is_an_error_not_an_empty_document(tmp_path):
    status, message = read_document(str(pdf_factory.write_corrupt(tmp_path / "bad.pdf")), 10_000_000)
    assert status == "error" and message
