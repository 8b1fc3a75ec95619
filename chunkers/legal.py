"""Legal layout: the text of an agreement -> units with the clause hierarchy rebuilt and page ranges kept.

Input is what the PDF source extracts: pages separated by form feeds (\\f), text blocks (one parsed element
each, running headers, footers and page numbers already removed) separated by blank lines. PDF parsers
return headings and clauses without depth, so the hierarchy is read from the numbering itself:

    level 1  ARTICLE IV / Article 4 / "4. Term and Termination" (a short numbered title)
    level 2  Section 4.02 ... / 4.02 ...
    level 3  (a), (b) ...
    level 4  (i), (ii) ... (roman numerals, unless they continue a run of letters: (h) then (i))

Article and section headings are heading units (glued to what follows); a clause is a paragraph that opens
a deeper section, so a section of the packer starting at clause (b) carries the breadcrumbs
ARTICLE II Servicing > Section 2.01 Standard of Care > (b). A definition ("Term" means ...) is a unit
tagged with its term, so that it becomes a child chunk of its own; a numbered one ("1.26 “Term” means ...")
is a definition inside its article, not a section of its own. A block that continues on the next
page (it starts in lower case) is joined to the one it continues. Every unit keeps its page range.

The front matter, before the first clause, is where an agreement states what it is: its title ("MASTER
SERVICES AGREEMENT"), then its opening statement ("This Agreement is made as of March 1, 2019 by and
between ..."), among filing legends, a table of contents and recitals. The title opens a section of its
own, labelled with it (so the cover and preamble are a section titled by the agreement, not a headless
"root" merged into the first article), and the opening statement is a child chunk of its own, so that a
question about the agreement's name, parties or date meets that sentence rather than a slice diluted by the
legends around it. A table of contents opens no sections: its numbered lines would otherwise become empty
articles, and the preamble after them would sit under the last one ("15. Dispute Resolution").
"""

from __future__ import annotations

import re
from dataclasses import replace

from cairn.agreement_title import agreement_title
from cairn.chunkers.blocks import sentence_pieces
from cairn.chunkers.tokens import count_tokens
from cairn.chunkers.units import Unit, UnitKind, piece_budget
from cairn.schemas.config import ChunkingConfig
from cairn.schemas.records import PAGE_BREAK

_ARTICLE = re.compile(r"^(ARTICLE|Article)\s+([IVXLC]+|\d+)\b[.:]?\s*(.*)$", re.DOTALL)
_SECTION = re.compile(r"^(?:(?:SECTION|Section)\s+)?(\d{1,2}\.\d{1,2}(?:\.\d{1,2})?)\.?\s+(.+)$", re.DOTALL)
_SECTION_WORD = re.compile(r"^(?:SECTION|Section)\s+(\d{1,3}(?:\.\d{1,2})*)\.?\s*(.*)$", re.DOTALL)
_NUMBERED_TITLE = re.compile(r"^(\d{1,2})\.\s+([A-Z][^.;:]{2,80})\.?$")
# "4. Term and Termination. (a) The initial term ...": a numbered title and its body in one block
_NUMBERED_INLINE = re.compile(r"^(\d{1,2})\.\s+([A-Z][^.;:]{2,80})\.\s+([A-Z(“\"].*)$", re.DOTALL)
_CLAUSE = re.compile(r"^\(([a-z]{1,2}|[ivxl]{1,6}|\d{1,2})\)\s+\S")
_DEFINITION = re.compile(
    r"^[\"“]([^\"”]{1,80})[\"”]\s+(?:shall\s+)?(?:means?|has the meaning|shall have the meaning|includes?|refers? to)\b"
)
# pdfminer joins lines: "...this Agreement.2.11 “Venue” means" or "Agreement6.1 Newegg grants"; cut there
_GLUED_SECTION = re.compile(r"(?<=[a-z.;:”\")])(?=\d{1,2}\.\d{1,2}\s+[A-Z“\"])")
_TITLE_MAX_WORDS = 16
# "This Agreement is made as of ... by and between", "THIS AGREEMENT is entered into ...": the opening statement
_OPENING = re.compile(
    r"\bagreement\b.{0,400}?\b(?:between|among|made|entered\s+into|dated|executed)\b", re.IGNORECASE | re.DOTALL
)
_CONTENTS = re.compile(r"^(?:TABLE\s+OF\s+CONTENTS|Table\s+of\s+Contents|CONTENTS|Contents|INDEX)\b")
_PROSE_WORDS = 40  # a block this long without dot leaders is prose: the table of contents has ended
_ROMAN = {"i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x", "xi", "xii"}
_HEADING_WORDS = 14  # a section's title is its first sentence when that is this short


def legal_units(text: str, config: ChunkingConfig) -> list[Unit]:
    builder = _Builder(config)
    for page_number, page in enumerate(text.split(PAGE_BREAK), start=1):
        for block in page.split("\n\n"):
            block = " ".join(block.split())
            if block:
                for piece in _GLUED_SECTION.split(block):
                    if piece.strip():
                        builder.add(piece.strip(), page_number)
    return builder.units


class _Builder:
    def __init__(self, config: ChunkingConfig) -> None:
        self.config = config
        self.units: list[Unit] = []
        self.path: list[tuple[int, str]] = []  # the open (level, label) stack
        self.last_letter = ""  # the last (a)-style label at level 3, to read "(i)" after "(h)" as a letter
        self.front = True  # still in the front matter: no clause or heading of the body opened yet
        self.contents = False  # inside a table of contents (front matter only)
        self.titled = False  # the agreement's title has opened the front matter's section
        self.opened = False  # the opening statement has been seen

    def add(self, block: str, page: int) -> None:
        previous = self.units[-1] if self.units else None
        if (
            previous
            and previous.kind == "paragraph"
            and block[0].islower()
            and previous.pages
            and previous.pages[1] < page
        ):
            joined = f"{previous.text} {block}"
            self.units[-1] = replace(
                previous, text=joined, tokens=count_tokens(joined), pages=(previous.pages[0], page)
            )
            return
        if self.front and self._front_matter(block, page):
            return
        if match := _ARTICLE.match(block):
            title = " ".join(p for p in (f"{match.group(1).upper()} {match.group(2)}", match.group(3).strip()) if p)
            return self._heading(1, title, block, page)
        if (
            previous
            and previous.is_heading
            and previous.level == 1
            and previous.pages  # every unit built here has its pages: this says so to the type checker
            and not self.front
            and _is_caps_title(block)
        ):
            self.path[-1] = (1, f"{self.path[-1][1]} {block}")  # "ARTICLE I" then "DEFINITIONS" on its own line
            joined = f"{previous.text}\n{block}"
            self.units[-1] = replace(
                previous,
                text=joined,
                tokens=count_tokens(joined),
                heading_path=tuple(label for _, label in self.path),
                pages=(previous.pages[0], page),
            )
            return
        if (match := _SECTION.match(block)) and _DEFINITION.match(match.group(2).strip()):
            return self._paragraph(block, page, defines=match.group(2).strip())  # "1.26 “Term” means": a definition
        if (match := _SECTION_WORD.match(block)) or (match := _SECTION.match(block)):
            number, rest = match.group(1), match.group(2).strip()
            title, body = _split_title(rest)
            prefix = "Section " if block.lower().startswith("section") else ""
            self._heading(2, f"{prefix}{number} {title}".strip(), f"{block[: len(block) - len(body)].strip()}", page)
            if body:
                self._paragraph(body, page)
            return
        if match := _NUMBERED_TITLE.match(block):
            return self._heading(1, f"{match.group(1)}. {match.group(2)}", block, page)
        if (match := _NUMBERED_INLINE.match(block)) and _is_cased_title(match.group(2)):
            self._heading(1, f"{match.group(1)}. {match.group(2)}", block[: match.start(3)].strip(), page)
            return self._paragraph(match.group(3), page)
        if match := _CLAUSE.match(block):
            label = match.group(1)
            level = 4 if label in _ROMAN and not _continues_letters(self.last_letter, label) else 3
            if level == 3:
                self.last_letter = label
            self._open(level, f"({label})")
            return self._paragraph(block, page, section_start=True)
        self._paragraph(block, page)

    def _front_matter(self, block: str, page: int) -> bool:
        """Title, table of contents and opening statement, before the body's first clause; True when
        `block` was taken as one of them."""
        title = agreement_title(block)
        if self.contents and not title and not _OPENING.search(block) and not _is_prose(block):
            self._paragraph(block, page)  # a line of the contents: "15. DISPUTE RESOLUTION .... 41"
            return True
        self.contents = False
        if _CONTENTS.match(block):
            self.contents = True
            self._paragraph(block, page)
            return True
        if title and not self.titled and len(block.split()) <= _TITLE_MAX_WORDS:
            self.titled = True
            self.path = [(1, title)]
            self.units.append(self._unit(block, "heading", True, (page, page)))
            return True
        if not self.opened and _OPENING.search(block):
            self.opened = True
            self._paragraph(block, page, alone=True)
            return True
        return False

    def _heading(self, level: int, label: str, text: str, page: int) -> None:
        self._open(level, label)
        if level <= 2:
            self.last_letter = ""
        self.units.append(self._unit(text, "heading", True, (page, page)))

    def _open(self, level: int, label: str) -> None:
        if self.front and self.path and self.titled:
            self.path.clear()  # the body's first heading is a sibling of the front matter, not under its title
        self.front = False
        while self.path and self.path[-1][0] >= level:
            self.path.pop()
        self.path.append((level, label))

    def _paragraph(
        self, text: str, page: int, section_start: bool = False, defines: str = "", alone: bool = False
    ) -> None:
        definition = _DEFINITION.match(defines or text)
        term = definition.group(1).strip() if definition else ""
        budget = piece_budget(self.config)
        pieces = sentence_pieces(text, budget) if count_tokens(text) > budget else [text]
        for n, piece in enumerate(pieces):
            self.units.append(self._unit(piece, "paragraph", section_start and n == 0, (page, page), term, alone))

    def _unit(
        self,
        text: str,
        kind: UnitKind,
        section_start: bool,
        pages: tuple[int, int],
        term: str = "",
        alone: bool = False,
    ) -> Unit:
        path = tuple(label for _, label in self.path)
        return Unit(
            text,
            count_tokens(text),
            kind,
            path,
            self.path[-1][0] if self.path else 0,
            section_start,
            pages,
            term,
            alone,
        )


def _is_prose(block: str) -> bool:
    return len(block.split()) >= _PROSE_WORDS and "...." not in block


def _split_title(rest: str) -> tuple[str, str]:
    """ "Defined Terms. Capitalized terms used..." -> ("Defined Terms", "Capitalized terms used...")."""
    match = re.match(r"^(.{1,120}?)[.:](?:\s+|$)(.*)$", rest, re.DOTALL)
    if match and len(match.group(1).split()) <= _HEADING_WORDS and not _DEFINITION.match(rest):
        return match.group(1).strip(), match.group(2).strip()
    return "", rest


def _is_cased_title(text: str) -> bool:
    """ "Term and Termination", "No Control by the Company": a title, not a sentence ("Customer shall pay")."""
    words = text.split()
    return len(words) <= 8 and all(w[0].isupper() or len(w) <= 3 for w in words)


def _is_caps_title(block: str) -> bool:
    words = block.split()
    return 0 < len(words) <= 10 and block.upper() == block and any(c.isalpha() for c in block)


def _continues_letters(last_letter: str, label: str) -> bool:
    """(i) right after (h), (v) after (u), (x) after (w): a letter, not a roman numeral."""
    return len(last_letter) == 1 and len(label) == 1 and ord(label) == ord(last_letter) + 1
