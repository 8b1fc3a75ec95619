"""Legal PDFs from a folder or S3: one document per file, parsed offline.

The source's parser (PDFium's text layer by default, sources/pdftext.py; or unstructured's fast strategy)
gives text blocks with their page number; it runs in a worker process that is killed past the source's
parse_timeout_seconds (sources/pdfparse.py), after the page count is checked against max_pages, and its text
is bounded by max_text_chars. unstructured's categories are not used for dropping text (real filings come
back with body text labelled Header or Footer); instead a running header or footer is recognised by
repetition: a short line that recurs on
several pages (digits ignored), and bare page numbers ("7", "Page 7", "- 7 -", "7 of 9"). What remains is
handed to the legal layout as pages separated by form feeds, one element per block (chunkers/legal.py).

Title, parties and effective date are read from the first page when they can be found; the effective date
is the document's temporal_start; doc_tag is the file name without its extension.

Bad input is named and explained: not a PDF, encrypted, unreadable (corrupt or truncated), no text layer
(scanned or image-only: OCR needs models this deployment does not have), or no text at all. A document some
of whose pages have no text layer is indexed with what it has, and says which pages it lacks: in its rows
(`extra.pages_without_text`, `extra.warnings`) and as a warning in the run report.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path, PurePosixPath

from cairn.agreement_title import agreement_title
from cairn.schemas import TEMPORAL_OPEN, ContentType, DocumentRef, SourceDocument, SourceType
from cairn.schemas.records import PAGE_BREAK
from cairn.schemas.row_links import AgreementCard
from cairn.schemas.source_config import PdfSourceConfig
from cairn.sources.base import DocumentError, NothingToIndex
from cairn.sources.blobs import Blob
from cairn.sources.blobsource import BlobSource
from cairn.sources.pdfparse import WORKER

_PAGE_NUMBER = re.compile(r"^(?:-\s*)?(?:page\s+)?\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?(?:\s*-)?$", re.IGNORECASE)
_REPEATED_MAX_CHARS = 120
_TITLE_BLOCKS = 12  # the title is among the first blocks of page 1, after filing legends and exhibit labels
_TITLE_WORDS = 16
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_DATE = (
    rf"(?:(?:{_MONTHS})\s+\d{{1,2}},?\s+\d{{4}}|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:day\s+of\s+)?(?:{_MONTHS}),?\s+\d{{4}})"
)
_EFFECTIVE = re.compile(
    rf"(?:dated|effective|entered into|made)(?:\s+and\s+\w+)?\s+(?:as\s+of|on)\s+(?:the\s+|this\s+)?({_DATE})",
    re.IGNORECASE,
)
_EFFECTIVE_LABEL = re.compile(rf"Effective\s+Date[\"”]?\s*(?:means|:|is)?\s*({_DATE})", re.IGNORECASE)
_PARTIES = re.compile(
    r"\b(?:by\s+and\s+)?between\s+(.{3,150}?)(?:\s*\([^)]{0,80}\))?,?\s+and\s+(.{3,150}?)"
    r"(?:\s*\(|;|,\s+(?:a|an|the)\s|\.\s+[A-Z][a-z]|\.?$)",
    re.IGNORECASE | re.DOTALL,
)


@dataclass(frozen=True)
class ParseLimits:
    """What one file may cost (its pages, counted before parsing, its text, the parse's time), and the
    parser that reads it."""

    max_pages: int = PdfSourceConfig.model_fields["max_pages"].default
    max_text_chars: int = PdfSourceConfig.model_fields["max_text_chars"].default
    timeout_seconds: float = PdfSourceConfig.model_fields["parse_timeout_seconds"].default
    parser: str = PdfSourceConfig.model_fields["parser"].default

    @classmethod
    def of(cls, config: PdfSourceConfig) -> ParseLimits:
        return cls(config.max_pages, config.max_text_chars, config.parse_timeout_seconds, config.parser)


@dataclass
class PdfText:
    """A PDF's body text: blocks per page (running headers, footers, page numbers removed), and the pages
    that had no text layer (scanned), 1-based."""

    pages: list[list[str]]
    pages_without_text: list[int]


def extract_text(path: Path, locator: str, limits: ParseLimits = ParseLimits()) -> PdfText:
    """The text blocks of each page, running headers, footers and page numbers removed, and the pages without
    a text layer; parsed in the worker process (sources/pdfparse.py) within the limits."""
    count = _check_pdf(path, locator)
    if count > limits.max_pages:
        raise DocumentError(locator, f"{count:,} pages, over the source's max_pages ({limits.max_pages:,}): not parsed")
    parsed = WORKER.parse(path, locator, limits.max_text_chars, limits.timeout_seconds, limits.parser)
    return body_text(parsed.blocks, count, parsed.pages_without_text, locator)


def body_text(blocks: list[tuple[int, str]], page_count: int, pages_without_text: list[int], locator: str) -> PdfText:
    """A parser's (page, text) blocks -> the body text of each page: bare page numbers dropped, and short
    lines that recur on 3+ pages (or every page of a 2-page document), digits ignored, dropped as running
    headers and footers."""
    if not blocks:
        raise DocumentError(
            locator, "no text layer (a scanned or image-only PDF?): OCR is not available, nothing indexed"
        )
    pages_of: dict[str, set[int]] = {}
    for page, text in blocks:
        pages_of.setdefault(_shape(text), set()).add(page)
    last_text_page = max(page for page, _ in blocks)
    repeat = max(2, min(3, last_text_page))
    pages: list[list[str]] = [[] for _ in range(max(last_text_page, page_count))]
    for page, text in blocks:
        if _PAGE_NUMBER.match(text):
            continue
        if len(text) <= _REPEATED_MAX_CHARS and last_text_page > 1 and len(pages_of[_shape(text)]) >= repeat:
            continue
        pages[page - 1].append(text)
    if not any(pages):
        raise NothingToIndex(locator, "only headers, footers and page numbers, no body text: nothing to index")
    while len(pages) > 1 and not pages[-1] and len(pages) not in pages_without_text:
        pages.pop()  # blank trailing pages hold nothing to cite
    return PdfText(pages, list(pages_without_text))


def _shape(text: str) -> str:
    return re.sub(r"\d+", "#", text.lower())


def _check_pdf(path: Path, locator: str) -> int:
    """The page count of a PDF that can be parsed; DocumentError naming what it is instead."""
    with open(path, "rb") as handle:
        head = handle.read(1024)
    if b"%PDF-" not in head:
        kind = "HTML" if b"<html" in head.lower() else "text" if head and b"\x00" not in head else "binary data"
        raise DocumentError(locator, f"not a PDF (the file starts with {kind}, not %PDF-)")
    try:
        from pypdf import PdfReader

        reader = PdfReader(str(path), strict=False)
        if reader.is_encrypted:
            raise DocumentError(locator, "encrypted PDF: it needs a password, which Cairn does not have")
        return len(reader.pages)
    except DocumentError:
        raise
    except Exception as exc:  # noqa: BLE001 - pypdf raises many types on a damaged file
        raise DocumentError(
            locator, f"cannot open PDF ({type(exc).__name__}: {exc}); the file may be corrupt or truncated"
        ) from None


def metadata(pages: list[list[str]], fallback_title: str) -> dict:
    """Title, parties and effective date from the opening text, where they can be found."""
    opening = " ".join(block for page in pages[:2] for block in page)[:6000]
    first = (pages[0] if pages else [])[:_TITLE_BLOCKS]
    # a block that is the agreement's name ("Exhibit 10.1 CONSULTING AGREEMENT" names "CONSULTING AGREEMENT"),
    # else the name its opening statement gives ("This SOFTWARE LICENSE AGREEMENT is entered into ...")
    title = (
        next((agreement_title(b) or b for b in first if _looks_like_title(b)), "")
        or next((agreement_title(b) for b in first if len(b.split()) <= _TITLE_WORDS and agreement_title(b)), "")
        or next((agreement_title(b) for b in first if agreement_title(b)), "")
        or fallback_title
    )
    found: dict = {"title": title.strip()}
    parties = _PARTIES.search(opening)
    if parties:
        found["parties"] = [_clean_party(parties.group(1)), _clean_party(parties.group(2))]
    effective = _EFFECTIVE_LABEL.search(opening) or _EFFECTIVE.search(opening)
    if effective:
        when = _parse_date(effective.group(1))
        if when is not None:
            found["effective_date"] = when
    return found


def _looks_like_title(block: str) -> bool:
    words = block.split()
    return 1 <= len(words) <= 14 and "AGREEMENT" in block.upper() and block.upper() == block


def _clean_party(text: str) -> str:
    text = " ".join(text.split()).strip(" ,;")
    return re.sub(r"^(?:the\s+)", "", text, flags=re.IGNORECASE)[:200]


def _parse_date(text: str) -> int | None:
    cleaned = re.sub(r"(\d)(st|nd|rd|th)", r"\1", text.replace(",", " "))
    cleaned = re.sub(r"\bday\s+of\b", " ", cleaned)
    cleaned = " ".join(cleaned.split())
    for fmt in ("%B %d %Y", "%d %B %Y"):
        try:
            return int(datetime.strptime(cleaned, fmt).replace(tzinfo=UTC).timestamp())
        except ValueError:
            continue
    return None


class PdfSource(BlobSource[PdfSourceConfig]):
    kind = SourceType.PDF
    suffixes = (".pdf",)

    @cached_property
    def _blobs(self) -> dict[str, Blob]:
        """The blobs listed, by key: a document is loaded from its listing's blob."""
        return {}

    def content_version(self, key: str) -> str:
        try:
            with self.store.local_path(key) as path:
                return _sha256(path)  # streamed: a large PDF is never whole in memory
        except OSError as exc:
            raise DocumentError(key, f"cannot read file: {exc.strerror}") from None

    def listed(self, blob: Blob, version: str) -> DocumentRef:
        self._blobs[blob.key] = blob
        return self.document_ref(blob.key, pdf_version(version, self.config.parser))

    def load(self, ref: DocumentRef) -> SourceDocument:
        blob = self._blobs.get(ref.locator)
        with self.store.local_path(ref.locator) as path:
            parsed = extract_text(path, ref.locator, ParseLimits.of(self.config))
            modified = blob.modified if blob else int(path.stat().st_mtime)
        pages = parsed.pages
        stem = PurePosixPath(ref.locator).stem
        found = metadata(pages, stem)
        grant = self.granted(ref.locator, self.config.tenant, self.config.acl)
        extra: dict = {"page_count": len(pages)}
        warnings: list[str] = []
        if parsed.pages_without_text:
            extra["pages_without_text"] = parsed.pages_without_text
            warnings.append(scanned_pages_warning(parsed.pages_without_text, len(pages)))
        effective = found.get("effective_date")
        card = AgreementCard(
            parties=found.get("parties", []),
            effective_date=datetime.fromtimestamp(effective, tz=UTC).date().isoformat()
            if effective is not None
            else "",
        )
        extra.update(card.to_row())
        return self.document(
            ref.locator,
            ref.version_hash,
            grant,
            source_uri=self.store.uri(ref.locator),
            title=found["title"],
            content=PAGE_BREAK.join("\n\n".join(blocks) for blocks in pages),
            content_type=ContentType.AGREEMENT,
            created_at=modified,
            updated_at=modified,
            temporal_start=found.get("effective_date", modified),
            temporal_end=TEMPORAL_OPEN,
            tags=list(self.config.tags),
            doc_tag=stem,
            extra=extra,
            warnings=warnings,
        )


# What a PDF's text depends on besides its bytes: the parser and Cairn's rules for reading its output. It is
# part of every PDF's version_hash, so choosing another `parser`, or a release whose parse gives different
# text, re-indexes each PDF once at the next ingest instead of keeping the old text until the file changes.
# Bump a number with any change to sources/pdftext.py, sources/pdfparse.py or the block rules here that
# changes the text a PDF gives.
# /2: the title is the agreement's title line (not an exhibit label or the file name), and the legal layout reads
# the front matter (title section, opening statement); PDFs indexed before are re-read once to get both.
PARSE_IDENTITY = {"pdfium": "pdfium-text-layer/2", "unstructured": "unstructured-fast/2"}


def pdf_version(raw: str, parser: str) -> str:
    """A PDF's version_hash: its bytes' version (sha-256 in a folder, the ETag on S3) read by this parser."""
    return hashlib.sha256(f"{raw}\x1f{PARSE_IDENTITY[parser]}".encode()).hexdigest()


def scanned_pages_warning(pages: list[int], page_count: int) -> str:
    shown = ", ".join(str(p) for p in pages[:20]) + (f" and {len(pages) - 20} more" if len(pages) > 20 else "")
    return (
        f"{len(pages)} of {page_count} pages have no text layer (scanned?), not indexed: "
        f"page{'s' if len(pages) > 1 else ''} {shown}; OCR is not available"
    )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
