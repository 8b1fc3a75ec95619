"""Small PDFs with one layout each, for the text-layer parser (sources/pdftext.py): two columns written right
column first, pages turned by /Rotate or drawn at an angle, clause numbers in a margin of their own, and a
scanned page among text pages. Deterministic, original text, latin-1 core fonts (tests/pdf_factory.py has
the full contracts and the hostile files)."""

from __future__ import annotations

import io
from pathlib import Path

from fpdf import FPDF

from tests.pdf_factory import CREATION_DATE

LEFT_COLUMN = [
    "1. Scope. The Supplier shall deliver the goods listed in the order form to the Buyer's warehouse.",
    "2. Price. The Buyer shall pay the prices stated in the order form within thirty days of delivery.",
    "3. Risk. Risk in the goods passes to the Buyer when they are unloaded at the warehouse door.",
]
RIGHT_COLUMN = [
    "4. Warranty. The Supplier warrants that the goods conform to their specification for one year.",
    "5. Notices. Every notice under this Agreement shall be in writing and delivered by hand or courier.",
    "6. Law. This Agreement is governed by the laws of the State of New York.",
]
MARGIN_CLAUSES = [
    ("1.", "DEFINITIONS"),
    ("1.1", '"Affiliate" means any entity that controls, is controlled by or is under common control with a Party.'),
    ("1.2", '"Confidential Information" means all non-public information disclosed by one Party to the other.'),
    ("2.", "TERM AND TERMINATION"),
    ("2.1", "This Agreement begins on the Effective Date and continues for three years."),
    ("(a)", "Either Party may terminate this Agreement on ninety days' written notice to the other."),
    ("(b)", "A Party may terminate at once if the other Party commits a material breach it does not cure."),
]


def _pdf() -> FPDF:
    pdf = FPDF(format="Letter")
    pdf.set_creation_date(CREATION_DATE)
    pdf.set_producer("Cairn tests/pdf_layouts.py")
    pdf.set_auto_page_break(False)
    return pdf


def _column(pdf: FPDF, x: float, paragraphs: list[str]) -> None:
    pdf.set_xy(x, 40)
    for paragraph in paragraphs:
        pdf.set_x(x)
        pdf.multi_cell(80, 6, paragraph, new_x="LEFT", new_y="NEXT")
        pdf.ln(4)


def _save(pdf: FPDF, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(pdf.output()))
    return path


def write_two_columns(path: str | Path) -> Path:
    """One page: a heading across the page, then two columns of numbered clauses; the right column is drawn
    first, so content order is not reading order."""
    pdf = _pdf()
    pdf.add_page()
    pdf.set_font("Times", "B", 14)
    pdf.set_xy(20, 22)
    pdf.cell(175, 8, "SUPPLY AGREEMENT TERMS AND CONDITIONS OF SALE", align="C")
    pdf.set_font("Times", "", 11)
    _column(pdf, 112, RIGHT_COLUMN)
    _column(pdf, 20, LEFT_COLUMN)
    return _save(pdf, path)


def write_margin_numbers(path: str | Path) -> Path:
    """Clause numbers in a margin of their own, each drawn apart from its text on the same line (as many
    filings are), headings in bold capitals, definitions in straight quotes."""
    pdf = _pdf()
    pdf.add_page()
    y = 30.0
    for number, text in MARGIN_CLAUSES:
        heading = text.isupper()
        pdf.set_font("Times", "B" if heading else "", 11)
        pdf.text(22, y, number)
        pdf.set_xy(38, y - 4.2)
        pdf.multi_cell(150, 5.5, text, new_x="LEFT", new_y="NEXT")
        y = pdf.get_y() + 5.5
    return _save(pdf, path)


def write_rotated(path: str | Path) -> Path:
    """Three pages with the same clauses: upright; turned a quarter by the page's /Rotate; and drawn at 90
    degrees on an upright page (a landscape page put in a portrait file)."""
    pdf = _pdf()
    pdf.set_font("Times", "", 11)
    for _ in range(2):
        pdf.add_page()
        _column(pdf, 20, LEFT_COLUMN)
    pdf.add_page()
    with pdf.rotation(90, 108, 140):
        y = 100.0
        for paragraph in LEFT_COLUMN:
            pdf.set_xy(40, y)
            pdf.multi_cell(150, 6, paragraph, new_x="LEFT", new_y="NEXT")
            y = pdf.get_y() + 4
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for number, page in enumerate(PdfReader(io.BytesIO(bytes(pdf.output()))).pages):
        writer.add_page(page)
        if number == 1:
            writer.pages[-1].rotate(90)
    out = io.BytesIO()
    writer.write(out)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(out.getvalue())
    return path


def write_partly_scanned(path: str | Path) -> Path:
    """Four pages: clauses, a page that draws only shapes (a scan: no text layer), a blank page (nothing
    drawn), clauses again."""
    pdf = _pdf()
    pdf.set_font("Times", "", 11)
    pdf.add_page()
    _column(pdf, 20, LEFT_COLUMN)
    pdf.add_page()
    pdf.set_fill_color(60, 60, 60)
    for line in range(30):
        pdf.rect(25, 30 + 7 * line, 150, 2.2, style="F")
    pdf.add_page()
    pdf.add_page()
    _column(pdf, 20, RIGHT_COLUMN)
    return _save(pdf, path)
