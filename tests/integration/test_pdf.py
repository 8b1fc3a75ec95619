"""Legal PDFs through the source's parser in its worker process (PDFium by default, unstructured on request;
both offline, real parsers) and the legal layout: hierarchy, definitions as their own chunks, page ranges,
headers and footers gone, metadata, scanned pages reported, and every kind of bad PDF named."""

from __future__ import annotations

import re

import pytest

from cairn.chunkers import chunk_document
from cairn.chunkers.legal import legal_units
from cairn.schemas import ContentType, DocumentRef
from cairn.schemas.config import ChunkingConfig, PdfSourceConfig
from cairn.schemas.records import PAGE_BREAK, parse_day
from cairn.sources import DocumentError
from cairn.sources.pdf import ParseLimits, PdfSource, extract_text
from tests import pdf_factory, pdf_layouts

CONFIG = ChunkingConfig()


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    folder = tmp_path_factory.mktemp("legal")
    pdf_factory.write_sample(folder / "sample-psa.pdf")
    source = PdfSource(PdfSourceConfig(name="contracts", type="pdf", path=str(folder), tenant="acme", acl=["legal"]))
    refs = list(source.discover())
    assert [r.locator for r in refs] == ["sample-psa.pdf"]
    return source.load(refs[0])


def test_metadata_title_parties_effective_date_and_doc_tag(sample):
    assert sample.title == "POOLING AND SERVICING AGREEMENT"
    assert sample.extra["parties"] == ["Sample Depositor LLC", "Sample Trust Company, N.A"]
    assert sample.temporal_start == parse_day("2024-06-01") and sample.extra["effective_date"] == "2024-06-01"
    assert sample.doc_tag == "sample-psa" and sample.content_type == ContentType.AGREEMENT
    assert sample.extra["page_count"] == sample.content.count(PAGE_BREAK) + 1 >= 5


def test_running_headers_footers_and_page_numbers_are_removed(sample):
    assert "Confidential" not in sample.content
    assert not any(
        block.strip().startswith("Page ") for block in sample.content.replace(PAGE_BREAK, "\n\n").split("\n\n")
    )


def test_the_clause_hierarchy_is_rebuilt_from_the_numbering(sample):
    units = legal_units(sample.content, CONFIG)
    by_start = {u.text[:30]: u for u in units}
    subclause = next(u for text, u in by_start.items() if text.startswith("(i) the original Mortgage Note"))
    assert subclause.heading_path == (
        "ARTICLE II CONVEYANCE OF MORTGAGE LOANS",
        "Section 2.01 Conveyance of Mortgage Loans",
        "(a)",
        "(i)",
    )
    assert subclause.level == 4 and subclause.section_start
    clause_b = next(u for u in units if u.text.startswith("(b) the word including"))
    assert clause_b.heading_path[-2:] == ("Section 1.02 Interpretation", "(b)")


def test_each_defined_term_is_its_own_child_chunk_tagged_with_the_term(sample):
    sections = chunk_document(sample, CONFIG)
    terms = {c.term: c for s in sections for c in s.chunks if c.term}
    assert {
        "Accrual Period",
        "Business Day",
        "Certificateholder",
        "Closing Date",
        "Collection Account",
        "Cut-off Date",
    } <= set(terms)
    assert terms["Closing Date"].text.startswith('"Closing Date" means the date on which the Certificates')
    assert "Collection Account" not in terms["Closing Date"].text  # one definition per chunk


def test_every_section_keeps_its_page_range(sample):
    sections = chunk_document(sample, CONFIG)
    pages = sample.content.split(PAGE_BREAK)
    for section in sections:
        first, last = section.extra["page_start"], section.extra["page_end"]
        assert 1 <= first <= last <= len(pages)
        opening = section.text.split("\n\n")[0][:40]
        assert any(opening in page for page in pages[first - 1 : last])
    assert sections[-1].extra["page_end"] == len(pages)
    assert all(CONFIG.parent_min_tokens <= s.token_count <= CONFIG.parent_max_tokens for s in sections[:-1])


@pytest.mark.parametrize(
    "writer, reason",
    [
        (pdf_factory.write_encrypted, "encrypted PDF"),
        (pdf_factory.write_image_only, "no text layer"),
        (pdf_factory.write_truncated, "corrupt or truncated"),
        (pdf_factory.write_corrupt, "corrupt or truncated"),
        (pdf_factory.write_not_a_pdf, "not a PDF"),
    ],
)
def test_bad_pdfs_are_refused_with_a_reason(tmp_path, writer, reason):
    path = writer(tmp_path / "bad.pdf")
    with pytest.raises(DocumentError, match=reason) as caught:
        extract_text(path, "bad.pdf")
    assert caught.value.locator == "bad.pdf"


def test_a_runaway_parse_is_stopped_at_the_timeout_and_the_next_file_still_parses(tmp_path):
    """1,800 pages that each draw one shared 400-line stream (a few hundred kilobytes on disk) take PDFium tens of
    seconds on 2 cores (pdfminer far longer); the worker process parsing it is killed at the source's timeout, and
    a new one parses the next file. The timeout (5 s) sits far from both parses, so a loaded machine neither lets
    the bomb finish nor stops the six-page sample (at 1 s and 450 pages it did)."""
    pdf_factory.write_shared_stream(tmp_path / "bomb.pdf", pages=1800, lines=400)
    pdf_factory.write_sample(tmp_path / "sample.pdf")
    source = PdfSource(
        PdfSourceConfig(
            name="contracts",
            type="pdf",
            path=str(tmp_path),
            tenant="acme",
            acl=["legal"],
            parse_timeout_seconds=5,
            max_text_chars=1_000_000_000,
        )
    )
    refs = {r.locator: r for r in source.discover()}
    with pytest.raises(DocumentError, match=r"longer than the source's parse_timeout_seconds \(5 s\)"):
        source.load(refs["bomb.pdf"])
    assert source.load(refs["sample.pdf"]).title == "POOLING AND SERVICING AGREEMENT"


@pytest.mark.parametrize(
    "limits, reason",
    [
        (ParseLimits(max_pages=50), "60 pages, over the source's max_pages (50): not parsed"),
        (ParseLimits(max_text_chars=5_000), "more than the source's max_text_chars (5,000) of text"),
    ],
)
def test_page_and_text_limits_refuse_a_file_by_name(tmp_path, limits, reason):
    path = pdf_factory.write_shared_stream(tmp_path / "long.pdf", pages=60, lines=20)
    with pytest.raises(DocumentError, match=re.escape(reason)) as caught:
        extract_text(path, "long.pdf", limits)
    assert caught.value.locator == "long.pdf"
    assert len(extract_text(path, "long.pdf").pages) == 60  # the defaults take it


def test_scanned_pages_are_a_warning_on_the_document_which_keeps_its_other_pages(tmp_path):
    pdf_layouts.write_partly_scanned(tmp_path / "scan.pdf")
    source = PdfSource(PdfSourceConfig(name="contracts", type="pdf", path=str(tmp_path), tenant="acme", acl=["legal"]))
    doc = source.load(next(iter(source.discover())))
    assert doc.extra["pages_without_text"] == [2]
    assert doc.warnings == ["1 of 4 pages have no text layer (scanned?), not indexed: page 2; OCR is not available"]
    assert doc.content.split(PAGE_BREAK)[3].startswith("4. Warranty.")  # page numbers (citations) unchanged


def test_the_unstructured_parser_is_still_there_on_request(tmp_path):
    pdf_layouts.write_two_columns(tmp_path / "two.pdf")
    source = PdfSource(
        PdfSourceConfig(
            name="contracts", type="pdf", path=str(tmp_path), tenant="acme", acl=["legal"], parser="unstructured"
        )
    )
    doc = source.load(next(iter(source.discover())))
    for clause in pdf_layouts.LEFT_COLUMN + pdf_layouts.RIGHT_COLUMN:
        assert clause.split(".")[1].strip() in doc.content


def test_the_sample_agreements_in_data_parse_with_their_definitions():
    from tests.conftest import REPO

    folder = REPO / "data" / "legal"
    source = PdfSource(PdfSourceConfig(name="contracts", type="pdf", path=str(folder), tenant="acme", acl=["legal"]))
    docs = [source.load(ref) for ref in source.discover() if isinstance(ref, DocumentRef)]
    assert len(docs) == 2
    psa = next(d for d in docs if "pooling" in d.doc_tag)
    terms = {c.term for s in chunk_document(psa, CONFIG) for c in s.chunks}
    assert "Determination Date" in terms
    assert psa.extra["parties"][0] == "Acme Mortgage Depositor LLC"


@pytest.mark.core
def test_contracts_from_s3_through_the_flow_bad_ones_reported_and_scoped_queries_cite_pages(
    tmp_path, prefect_server, s3, moto_endpoint
):
    from cairn.flows.ingest import ingest_flow
    from cairn.query import Principal, Retriever
    from tests.conftest import REPO, write_config

    s3.create_bucket(Bucket="legal")
    for path in sorted((REPO / "data" / "legal").glob("*.pdf")):
        s3.put_object(Bucket="legal", Key=f"contracts/{path.name}", Body=path.read_bytes())
    pdf_factory.write_encrypted(tmp_path / "locked.pdf")
    pdf_factory.write_not_a_pdf(tmp_path / "notes.pdf")
    pdf_layouts.write_partly_scanned(tmp_path / "scan.pdf")
    for name in ("locked.pdf", "notes.pdf", "scan.pdf"):
        s3.put_object(Bucket="legal", Key=f"contracts/{name}", Body=(tmp_path / name).read_bytes())
    config = write_config(
        tmp_path / "cairn.toml",
        tmp_path / "index",
        [
            {"name": "contracts", "type": "pdf", "uri": "s3://legal/contracts", "tenant": "acme", "acl": ["legal"]},
        ],
        s3={"endpoint_url": moto_endpoint, "region": "us-east-1", "page_size": 2},
        quality={"on_ingest": True},
    )
    report = ingest_flow(config_path=str(config))
    assert report["documents"]["indexed"] == 3 and report["documents"]["failed"] == 2
    reasons = {f["document"]: f["error"] for f in report["failures"]}
    assert "encrypted" in reasons["locked.pdf"] and "not a PDF" in reasons["notes.pdf"]
    assert [(w["document"], w["error"][:40]) for w in report["warnings"]] == [
        ("scan.pdf", "1 of 4 pages have no text layer (scanned")
    ]
    assert report["quality"]["success"], report["quality"]["failed"]

    retriever = Retriever.from_config(config)
    try:
        who = Principal("acme", ["legal"])
        psa = "acme-northwind-pooling-and-servicing-agreement"
        hits = retriever.retrieve("What is the Determination Date?", who, k=3, doc_tag=psa).hits
        assert hits and all(h.document_id == hits[0].document_id for h in hits)
        assert '"Determination Date" means' in hits[0].text
        assert ", p" in hits[0].citation and hits[0].citation.split(") ")[1].startswith("s3://legal/contracts/")
        other = retriever.retrieve(
            "What is the Determination Date?", who, k=3, doc_tag="acme-globex-master-services-agreement"
        ).hits
        assert all('Determination Date" means' not in h.text for h in other)
    finally:
        retriever.close()

    s3.delete_object(Bucket="legal", Key="contracts/acme-globex-master-services-agreement.pdf")
    again = ingest_flow(config_path=str(config))
    assert again["documents"]["deleted"] == 1 and again["documents"]["unchanged"] == 2
