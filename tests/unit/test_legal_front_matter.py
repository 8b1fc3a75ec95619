"""The front matter of an agreement in the legal layout (chunkers/legal.py): its title opens a section labelled
with it, its opening statement is a child chunk of its own, a table of contents opens no sections, and
"4. Term and Termination. (a) ..." is a numbered title with its body; the PDF source names the agreement
the same way (sources/pdf.py metadata)."""

from __future__ import annotations

import pytest

from cairn.agreement_title import agreement_title
from cairn.chunkers.legal import legal_units
from cairn.chunkers.sections import pack_sections
from cairn.schemas.config import ChunkingConfig
from cairn.schemas.records import PAGE_BREAK
from cairn.sources.pdf import metadata

CONFIG = ChunkingConfig()
LEGEND = (
    "[***] Certain confidential information contained in this document, marked by brackets, has been omitted "
    "and filed separately with the Securities and Exchange Commission."
)
OPENING = (
    'This Master Services Agreement (the "Agreement") is made as of March 1, 2019 by and between Acme Corp., '
    'a Delaware corporation ("Acme"), and Globex LLC, a Nevada limited liability company ("Globex").'
)
RECITAL = (
    "WHEREAS, Acme provides hosting services and Globex wishes to buy them on the terms of this Agreement; "
    "NOW, THEREFORE, in consideration of the mutual covenants set forth below, the parties agree as follows."
)
BODY = " ".join(["The Provider shall deliver the Services described in each Statement of Work with due care."] * 12)


def _document(*front: str) -> str:
    pages = [
        ["Exhibit 10.1", LEGEND, *front, "Exhibit 10.1 MASTER SERVICES AGREEMENT", OPENING, RECITAL],
        ["1. Services. " + BODY, "2. Fees. " + BODY],
    ]
    return PAGE_BREAK.join("\n\n".join(page) for page in pages)


@pytest.mark.parametrize(
    "block,title",
    [
        ("Exhibit 10.1 CONSULTING AGREEMENT", "CONSULTING AGREEMENT"),
        ("Exhibit 1 Execution Copy JOINT VENTURE AGREEMENT", "JOINT VENTURE AGREEMENT"),
        ("THIS LICENSE AND RESELLER AGREEMENT dated as of October 30, 2018 is made", "LICENSE AND RESELLER AGREEMENT"),
        (
            "Software License, Customization and Maintenance Agreement",
            "Software License, Customization and Maintenance Agreement",
        ),
        ("10. COVENANTS RELATING TO THE SUPPLY AGREEMENT", ""),  # a clause or a line of the contents
        ("DIGITAL CINEMA DESTINATIONS CORP.", ""),
    ],
)
def test_the_agreement_is_named_by_its_title_not_its_exhibit_label(block, title):
    assert agreement_title(block) == title


def test_the_title_opens_a_section_and_the_opening_statement_is_a_child_of_its_own():
    units = legal_units(_document(), CONFIG)
    heading = next(u for u in units if u.is_heading)
    assert heading.heading_path == ("MASTER SERVICES AGREEMENT",) and heading.section_start
    opening = next(u for u in units if u.text.startswith("This Master Services Agreement"))
    assert opening.alone and opening.heading_path == ("MASTER SERVICES AGREEMENT",)
    assert not any(u.alone for u in units if u is not opening)
    # the body's first clause is a sibling of the front matter, not a subsection of the title
    assert next(u for u in units if u.text.startswith("1. Services")).heading_path == ("1. Services",)

    sections = pack_sections(units, "MASTER SERVICES AGREEMENT", CONFIG)
    front = next(s for s in sections if OPENING in s.text)
    child = next(c for c in front.chunks if OPENING in c.text)
    # the title heading goes with the statement it introduces, the legends and recitals do not
    assert child.alone and child.text == f"Exhibit 10.1 MASTER SERVICES AGREEMENT\n\n{OPENING}"


def test_a_table_of_contents_opens_no_sections_and_the_preamble_stays_under_the_title():
    contents = [
        "TABLE OF CONTENTS",
        "1. DEFINITIONS",
        "1.1 Background",
        "2. TERM",
        "15. DISPUTE RESOLUTION .......... 41",
    ]
    units = legal_units(_document(*contents), CONFIG)
    assert [u.heading_path for u in units if u.is_heading] == [
        ("MASTER SERVICES AGREEMENT",),
        ("1. Services",),
        ("2. Fees",),
    ]
    assert next(u for u in units if u.text == OPENING).heading_path == ("MASTER SERVICES AGREEMENT",)


def test_a_numbered_title_with_its_body_in_one_block_opens_a_section_but_a_numbered_sentence_does_not():
    text = "\n\n".join(
        [
            "4. Term and Termination. (a) The initial term of this Agreement is one year.",
            "5. Customer shall pay. The fees are due within thirty days.",
        ]
    )
    units = legal_units(text, CONFIG)
    assert [(u.kind, u.text) for u in units[:2]] == [
        ("heading", "4. Term and Termination."),
        ("paragraph", "(a) The initial term of this Agreement is one year."),
    ]
    assert units[2].kind == "paragraph" and units[2].heading_path == ("4. Term and Termination",)


def test_the_pdf_source_names_the_agreement_by_its_title_line_or_its_opening_statement():
    assert (
        metadata([["Exhibit 10.1", LEGEND, "Exhibit 10.1 CONSULTING AGREEMENT", OPENING]], "file-stem")["title"]
        == "CONSULTING AGREEMENT"
    )
    opening_only = (
        'This SOFTWARE LICENSE AND MAINTENANCE AGREEMENT ("Agreement") is entered into as of May 1, 2010 '
        "between A and B."
    )
    assert (
        metadata([["Exhibit 10.16", LEGEND, opening_only]], "file-stem")["title"]
        == "SOFTWARE LICENSE AND MAINTENANCE AGREEMENT"
    )
    assert metadata([["Exhibit 10.16", LEGEND]], "file-stem")["title"] == "file-stem"


def test_the_opening_statement_alone_carries_the_document_card_in_what_search_reads():
    from cairn.index.rows import child_input, document_card
    from cairn.schemas.records import ContentType, SourceDocument, SourceType

    doc = SourceDocument(
        "d",
        "s",
        SourceType.PDF,
        "file:///a.pdf",
        "a.pdf",
        "MASTER SERVICES AGREEMENT",
        _document(),
        "t",
        ["all"],
        ContentType.AGREEMENT,
        "v",
        0,
        0,
        0,
        extra={"effective_date": "2019-03-01", "parties": ["Acme Corp.", "Globex LLC"]},
    )
    assert document_card(doc) == "Name: MASTER SERVICES AGREEMENT. Date: 2019-03-01. Parties: Acme Corp.; Globex LLC."
    section = next(s for s in pack_sections(legal_units(doc.content, CONFIG), doc.title, CONFIG) if OPENING in s.text)
    opening = next(c for c in section.chunks if c.alone)
    assert (
        child_input(doc, section, opening.text, opening.alone)
        == f"MASTER SERVICES AGREEMENT\n{document_card(doc)}\n{opening.text}"
    )
    other = next(c for c in section.chunks if not c.alone)
    assert child_input(doc, section, other.text) == f"MASTER SERVICES AGREEMENT\n{other.text}"
