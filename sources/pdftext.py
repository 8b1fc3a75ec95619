"""A PDF's text layer read with PDFium (pypdfium2), cut into the blocks the legal layout reads.

PDFium gives each page's text in lines, in content order, and the box and font of every character; it reads
a contract page in a few milliseconds where pdfminer's layout analysis (unstructured's "fast" strategy) took
~50. What the layout analysis gave, blocks, is rebuilt here from the lines:

- reading order: a page whose lines fall into two columns (several lines wholly left of the middle and
  several wholly right of it) is read band by band, the left column before the right, a line that spans
  both (a heading) closing a band; a page turned by /Rotate or text drawn at an angle is read in the
  text's own direction (the characters' angle);
- a line starts a new block after a larger gap than the page's usual line pitch, after a line that stops
  well short of the column's right edge (a heading, a paragraph's last line), when the font size or weight
  changes (a bold heading above body text), or when it opens with a heading or a clause label (ARTICLE,
  Section 4.02, 4.02, (a), (iv), a., "Term" means).

A page that draws something (a scanned image, paths) but has no characters at all has no text layer: it is
returned empty and counted, so the source reports it instead of indexing nothing silently; a blank page
(nothing drawn) is just blank.
"""

from __future__ import annotations

import ctypes
import math
import re
import statistics
from dataclasses import dataclass
from typing import Literal

_OPENS_BLOCK = re.compile(
    r"^(?:ARTICLE|Article|SECTION|Section|EXHIBIT|Exhibit|SCHEDULE|Schedule)\s+[\dIVXLCA-Z]"
    r"|^\d{1,2}(?:\.\d{1,2})+\.?\s"  # 4.02 / 4.02.1
    r"|^\d{1,2}\.\s+\S"  # 4. Term
    r"|^\((?:[a-z]{1,2}|[ivxl]{1,6}|\d{1,2}|[A-Z])\)\s"  # (a) (iv) (12) (A)
    r"|^[a-z]\.\s+\S"  # a. The Manufacturer ...
    r"|^[\"“][^\"”]{1,80}[\"”]\s+(?:shall\s+)?(?:means?|has the meaning|shall have the meaning|includes?|refers? to)\b"
    r"|^[•·▪◦●\-–]\s"  # bullets
)
# a clause number alone ("1.26", "(a)", "Section 4.02", "IV."): its text follows, often as a line of its own
_LABEL_ONLY = re.compile(
    r"^(?:ARTICLE|Article|SECTION|Section)\s+(?:[IVXLC]{1,7}|\d{1,3}(?:\.\d{1,3})*)\.?$"
    r"|^(?:\d{1,3}(?:\.\d{1,3})*\.?|\((?:[a-zA-Z]{1,2}|[ivxlIVXL]{1,6}|\d{1,2})\)|[IVXL]{1,6}\.)$"
)
_PARAGRAPH_GAP = 1.35  # a pitch this many times the page's usual one separates blocks
_SHORT_LINE = 0.82  # a line ending before this share of the column's width ends its block
_SIZE_STEP = 0.9  # points of font size difference that separate blocks

Blocks = list[tuple[int, str]]  # text blocks with their page number (1-based), in reading order
# A parse that gives no text: past max_chars (the characters read by then), or what the parser said
Refused = tuple[Literal["too-long"], int] | tuple[Literal["error"], str]


@dataclass(frozen=True)
class Line:
    """One line of text in its reading frame (x to the right along the text, y up), in points."""

    text: str
    left: float
    right: float
    baseline: float
    size: float
    bold: bool


def read_document(path: str, max_chars: int) -> tuple[Literal["ok"], tuple[Blocks, list[int]]] | Refused:
    """("ok", (blocks, pages_without_text)) with blocks [(page, text), ...]; ("too-long", chars);
    or ("error", message). Runs in the parse worker."""
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(path)
    except Exception as exc:  # noqa: BLE001 - PdfiumError and friends: a damaged or unsupported file
        return "error", f"{type(exc).__name__}: {exc}"
    blocks: Blocks = []
    empty: list[int] = []
    chars = 0
    try:
        for index in range(len(document)):
            page = document[index]
            try:
                lines = page_lines(page)
                if not lines and _draws_anything(page):  # an image (a scan) or paths, but no characters
                    empty.append(index + 1)
            finally:
                page.close()
            for text in page_blocks(lines):
                chars += len(text)
                if chars > max_chars:
                    return "too-long", chars
                blocks.append((index + 1, text))
        return "ok", (blocks, empty)
    except Exception as exc:  # noqa: BLE001 - a page PDFium cannot read fails the file, named
        return "error", f"{type(exc).__name__}: {exc}"
    finally:
        document.close()


def _draws_anything(page) -> bool:
    import pypdfium2.raw as raw

    return raw.FPDFPage_CountObjects(page.raw) > 0


def page_lines(page) -> list[Line]:
    """The page's non-blank lines in reading order."""
    import pypdfium2.raw as raw

    if page.get_rotation():
        page.set_rotation(0)  # /Rotate turns the display, not the text: read it in the page's own frame
    textpage = page.get_textpage()
    try:
        count = textpage.count_chars()
        if count <= 0:
            return []
        text = textpage.get_text_range(0, count)
        handle = textpage.raw
        lines: list[Line] = []
        out = tuple(ctypes.c_double() for _ in range(6))
        start = 0
        for raw_line in re.split(r"(\r\n|\n|\r)", text):
            if raw_line in ("\r\n", "\n", "\r"):
                start += len(raw_line)
                continue
            stripped = raw_line.strip()
            if stripped and len(text) == count:  # indices line up with characters (no surrogate pairs)
                first = start + len(raw_line) - len(raw_line.lstrip())
                last = start + len(raw_line.rstrip()) - 1
                lines.append(_line(raw, handle, stripped, first, last, out))
            elif stripped:
                lines.append(Line(stripped, 0.0, 0.0, -float(len(lines)), 0.0, False))
            start += len(raw_line)
    finally:
        textpage.close()
    return _reading_order(lines)


def _line(raw, handle, text: str, first: int, last: int, out: tuple) -> Line:
    """The line from its first and last characters; `out` holds six ctypes doubles (PDFium's out-parameters,
    made once per page: making them per line was a third of the parse time)."""
    left, right, bottom, top, x, y = out
    angle = raw.FPDFText_GetCharAngle(handle, first)
    cos, sin = (1.0, 0.0) if angle <= 0 or abs(angle) < 0.05 else (math.cos(angle), math.sin(angle))
    along = []  # the corners of both characters' boxes, measured along the text
    for index in (first, last):
        raw.FPDFText_GetCharBox(handle, index, left, right, bottom, top)
        along += [h * cos + v * sin for h in (left.value, right.value) for v in (bottom.value, top.value)]
    raw.FPDFText_GetCharOrigin(handle, first, x, y)
    baseline = -x.value * sin + y.value * cos
    size = float(raw.FPDFText_GetFontSize(handle, first))
    bold = raw.FPDFText_GetFontWeight(handle, first) >= 600
    return Line(text.replace("\x02", "").replace("\ufffe", ""), min(along), max(along), baseline, round(size, 1), bold)


def _middle_of_columns(lines: list[Line]) -> float | None:
    """The x between two columns when the lines fall into two (several wholly on each side), else None."""
    if len(lines) < 8:
        return None
    middle = (min(line.left for line in lines) + max(line.right for line in lines)) / 2
    left = sum(line.right < middle for line in lines)
    right = sum(line.left > middle for line in lines)
    return middle if left >= 4 and right >= 4 and right >= 0.25 * len(lines) else None


def _reading_order(lines: list[Line]) -> list[Line]:
    """Two columns read left then right, band by band; anything else in PDFium's order."""
    middle = _middle_of_columns(lines)
    if middle is None:
        return lines
    ordered: list[Line] = []
    band: list[Line] = []

    def close_band() -> None:
        band.sort(key=lambda line: (line.left > middle, -line.baseline))
        ordered.extend(band)
        band.clear()

    for line in sorted(lines, key=lambda each: -each.baseline):
        if line.left <= middle <= line.right:  # spans the gutter: a heading across both columns
            close_band()
            ordered.append(line)
        else:
            band.append(line)
    close_band()
    return ordered


def page_blocks(lines: list[Line]) -> list[str]:
    """The page's lines grouped into blocks (see the module docstring), whitespace collapsed."""
    if not lines:
        return []
    pitches = [a.baseline - b.baseline for a, b in zip(lines, lines[1:]) if 0 < a.baseline - b.baseline]
    pitch = statistics.median(pitches) if pitches else 0.0
    page_right = max(line.right for line in lines)
    middle = _middle_of_columns(lines)
    left_column_right = (
        max((line.right for line in lines if line.right < middle), default=page_right) if middle else page_right
    )
    blocks: list[list[str]] = [[lines[0].text]]
    for previous, line in zip(lines, lines[1:]):
        column_right = left_column_right if middle and previous.right < middle else page_right
        label_only = len(blocks[-1]) == 1 and _LABEL_ONLY.match(blocks[-1][0])
        if not label_only and _starts_block(previous, line, pitch, column_right):
            blocks.append([line.text])
        else:
            blocks[-1].append(line.text)
    return [" ".join(" ".join(block).split()) for block in blocks]


def _starts_block(previous: Line, line: Line, pitch: float, column_right: float) -> bool:
    step = previous.baseline - line.baseline
    if pitch and abs(step) < 0.3 * pitch and line.left >= previous.right - 2:  # the same line, in two runs
        return False
    if step <= 0 or (pitch and step > _PARAGRAPH_GAP * pitch):  # a jump back up (a new column) or a gap
        return True
    if abs(previous.size - line.size) >= _SIZE_STEP or previous.bold != line.bold:
        return True
    if _OPENS_BLOCK.match(line.text):
        return True
    width = column_right - min(previous.left, line.left)
    return width > 0 and previous.right < min(previous.left, line.left) + _SHORT_LINE * width
