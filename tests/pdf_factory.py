"""Deterministic contract PDFs for the legal source: one writer, a default sample, hostile variants.

Everything here writes files and parses nothing. The same spec always gives the same bytes
(fixed creation date, no random IDs), so a test can compare a regenerated PDF byte for byte.
What a contract says is its spec (tests/agreement_spec.py); the default sample's text is tests/agreement_sample.py.

Layout, as a real contract:

    page 1      the title; "This AGREEMENT is dated as of {date} between {A} and {B}."; recitals
    page 2...   ARTICLE I                      (bold, centred, its own line)
                DEFINITIONS                    (bold, centred, next line)
                Section 1.01 Defined Terms.    (bold, its own line)
                paragraphs, then "Term" means ... (one paragraph per term, straight quotes),
                then (a) clauses indented, (i) sub-clauses indented further
    every page  a running header ("{title} - Confidential") and a "Page N" footer

scripts/make_sample_agreements.py uses the same writer for the PDFs committed under data/legal/.
"""

from __future__ import annotations

import random
import zlib
from datetime import UTC, datetime
from pathlib import Path

from fpdf import FPDF

from tests.agreement_sample import sample_spec
from tests.agreement_spec import AgreementSpec, check_latin1, dated_line, definition_paragraph

CREATION_DATE = datetime(2024, 1, 1, tzinfo=UTC)
FONT = "Times"
BODY_SIZE = 12
LINE_H = 6.0
CLAUSE_INDENT = 10.0  # mm, "(a)" clauses
SUBCLAUSE_INDENT = 20.0  # mm, "(i)" sub-clauses


class _ContractPDF(FPDF):
    def __init__(self, running_header: str):
        super().__init__(orientation="P", unit="mm", format="Letter")
        self._running_header = running_header
        self.set_margins(25, 25, 25)
        self.set_auto_page_break(auto=True, margin=25)
        self.set_creation_date(CREATION_DATE)
        self.set_author("Cairn test fixtures")
        self.set_creator("Cairn tests/pdf_factory.py")
        self.set_producer("Cairn tests/pdf_factory.py")

    def header(self):
        self.set_font("Helvetica", "I", 8)
        self.set_y(12)
        self.cell(0, 5, self._running_header, align="C", new_x="LMARGIN", new_y="NEXT")
        self.set_y(self.t_margin)

    def footer(self):
        self.set_y(-18)
        self.set_font("Helvetica", "", 9)
        self.cell(0, 5, f"Page {self.page_no()}", align="C")

    # -- body helpers -------------------------------------------------------------------------

    def para(self, text: str, indent: float = 0.0, style: str = "", align: str = "J", after: float = 3.0) -> None:
        self.set_font(FONT, style, BODY_SIZE)
        base = 25.0
        self.set_left_margin(base + indent)
        self.set_x(base + indent)
        self.multi_cell(0, LINE_H, text, align=align, new_x="LMARGIN", new_y="NEXT")
        self.set_left_margin(base)
        self.set_x(base)
        self.ln(after)

    def heading(self, text: str, align: str = "L", after: float = 2.0, keep: float = 20.0) -> None:
        """A bold line kept on the same page as at least `keep` mm of what follows it."""
        if self.will_page_break(LINE_H + after + keep):
            self.add_page()
        self.para(text, style="B", align=align, after=after)


def render(spec: AgreementSpec, pdf: _ContractPDF | None = None) -> bytes:
    """The PDF for spec, as bytes (deterministic). `pdf`: a writer of one's own (e.g. one whose header also
    draws on each page); by default the plain contract writer."""
    check_latin1(spec)
    pdf = pdf or _ContractPDF(spec.running_header)
    pdf.set_title(spec.title)
    pdf.set_subject(dated_line(spec))

    # Title page.
    pdf.add_page()
    pdf.ln(40)
    pdf.set_font(FONT, "B", 20)
    pdf.multi_cell(0, 10, spec.title.upper(), align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(12)
    pdf.para(dated_line(spec), align="C", after=8)
    for recital in spec.recitals:
        pdf.para(recital)

    # Body.
    for i, art in enumerate(spec.articles):
        if i == 0:
            pdf.add_page()
        else:
            pdf.ln(6)
        pdf.heading(f"ARTICLE {art.number}", align="C", after=0, keep=LINE_H + 5 + 20)
        pdf.heading(art.title, align="C", after=5)
        for sec in art.sections:
            pdf.heading(f"Section {sec.number} {sec.title}.")
            for p in sec.paragraphs:
                pdf.para(p)
            for term, text in (sec.definitions or {}).items():
                pdf.para(definition_paragraph(term, text))
            for cl in sec.clauses:
                pdf.para(f"{cl.label} {cl.text}", indent=CLAUSE_INDENT)
                for label, text in cl.subclauses:
                    pdf.para(f"{label} {text}", indent=SUBCLAUSE_INDENT)
            pdf.ln(2)
    return bytes(pdf.output())


def write_agreement(path: str | Path, spec: AgreementSpec) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(render(spec))
    return path


def write_sample(path: str | Path) -> Path:
    return write_agreement(path, sample_spec())


# ---------------------------------------------------------------------------------------------
# Hostile variants: each breaks one assumption a parser might make.


def write_encrypted(path: str | Path) -> Path:
    """The sample, RC4-encrypted: opening it needs the user password "secret"."""
    spec = sample_spec()
    check_latin1(spec)
    pdf = _ContractPDF(spec.running_header)
    pdf.set_title(spec.title)
    pdf.set_encryption(owner_password="owner-secret", user_password="secret")
    pdf.add_page()
    pdf.heading(spec.title.upper(), align="C")
    pdf.para(dated_line(spec))
    for p in spec.articles[0].sections[0].paragraphs:
        pdf.para(p)
    for term, text in (spec.articles[0].sections[0].definitions or {}).items():
        pdf.para(definition_paragraph(term, text))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(pdf.output()))
    return path


def write_image_only(path: str | Path) -> Path:
    """One page of drawn shapes that look like a scanned contract: no text layer at all."""
    pdf = FPDF(format="Letter")
    pdf.set_creation_date(CREATION_DATE)
    pdf.set_producer("Cairn tests/pdf_factory.py")
    pdf.add_page()
    pdf.set_fill_color(235, 235, 230)
    pdf.rect(10, 10, 195.9, 259.4, style="F")  # paper tone of a scan
    pdf.set_fill_color(60, 60, 60)
    rng = random.Random(7)
    y = 30.0
    while y < 250:
        width = 150 if rng.random() < 0.8 else rng.uniform(40, 140)
        pdf.rect(28, y, width, 2.2, style="F")  # a "line of text"
        y += 6.0 if rng.random() < 0.85 else 12.0
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(pdf.output()))
    return path


def write_truncated(path: str | Path, fraction: float = 0.6) -> Path:
    """The sample cut to its first `fraction` of bytes: starts like a PDF, has no xref or %%EOF."""
    data = render(sample_spec())
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data[: int(len(data) * fraction)])
    return path


def write_corrupt(path: str | Path) -> Path:
    """A PDF header followed by deterministic garbage."""
    garbage = random.Random(1234).randbytes(4096)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"%PDF-1.7\n" + garbage)
    return path


def write_shared_stream(path: str | Path, pages: int = 300, lines: int = 400) -> Path:
    """A small PDF (about 150 bytes a page) whose `pages` pages all draw one compressed stream of `lines` lines
    of text: tiny on disk, pages x lines lines to parse. Written by hand (fpdf2 gives each page its own)."""
    text = (
        b"BT /F1 8 Tf 10 TL 20 780 Td "
        + b" ".join(
            b"(Clause %d: the Supplier shall deliver the services described in the Statement of Work.) '" % n
            for n in range(lines)
        )
        + b" ET"
    )
    stream = zlib.compress(text, 9)
    kids = " ".join(f"{5 + n} 0 R" for n in range(pages)).encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % pages,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ] + [
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
        b"/Contents 4 0 R >>"
    ] * pages
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(out))
    return path


NOT_A_PDF_TEXT = """<!DOCTYPE html>
<html><head><title>Master Services Agreement</title></head>
<body>
<h1>Master Services Agreement</h1>
<p>This file is an HTML export saved with a .pdf extension.</p>
<h2>ARTICLE I</h2><h3>DEFINITIONS</h3>
<p>"Services" means the hosting services described in each Statement of Work.</p>
</body></html>
"""


def write_not_a_pdf(path: str | Path) -> Path:
    """HTML text saved under a .pdf name."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(NOT_A_PDF_TEXT.encode("utf-8"))
    return path


__all__ = [
    "render",
    "write_agreement",
    "write_sample",
    "write_encrypted",
    "write_image_only",
    "write_shared_stream",
    "write_truncated",
    "write_corrupt",
    "write_not_a_pdf",
]
