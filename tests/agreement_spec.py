"""What a test contract is: the agreement's structure (articles, sections, definitions, clauses) and the lines
it is printed as. tests/pdf_factory.py draws a spec as a PDF; tests/agreement_sample.py is the default sample's
text, and scripts/agreement_*.py write the specs of the sample contracts under data/legal/.

Text goes through fpdf2's core fonts (Times, Helvetica), which take latin-1 only: `check_latin1` refuses a
spec with any other character up front rather than letting it render as '?'.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Clause:
    label: str  # "(a)"
    text: str
    subclauses: list[tuple[str, str]] = field(default_factory=list)  # [("(i)", text), ...]


@dataclass(frozen=True)
class Sect:
    number: str  # "1.01"
    title: str  # "Defined Terms" (rendered with a closing period)
    paragraphs: list[str] = field(default_factory=list)
    definitions: dict[str, str] | None = None  # term -> the text after 'means'
    clauses: list[Clause] = field(default_factory=list)


@dataclass(frozen=True)
class Article:
    number: str  # "I"
    title: str  # "DEFINITIONS"
    sections: list[Sect] = field(default_factory=list)


@dataclass(frozen=True)
class AgreementSpec:
    title: str  # "Pooling and Servicing Agreement"
    parties: list[str]
    effective_date: str  # "March 1, 2024", printed as given
    articles: list[Article]
    recitals: list[str] = field(default_factory=list)  # title-page paragraphs after the dated line
    header: str | None = None  # running header; default "{title} - Confidential"

    @property
    def running_header(self) -> str:
        return self.header if self.header is not None else f"{self.title} - Confidential"


def _join_parties(parties: list[str]) -> str:
    if len(parties) < 2:
        raise ValueError("an agreement needs at least two parties")
    if len(parties) == 2:
        return f"{parties[0]} and {parties[1]}"
    return ", ".join(parties[:-1]) + f" and {parties[-1]}"


def dated_line(spec: AgreementSpec) -> str:
    line = f"This AGREEMENT is dated as of {spec.effective_date} between {_join_parties(spec.parties)}"
    return line if line.endswith(".") else line + "."


def definition_paragraph(term: str, text: str) -> str:
    """'"Term" means text'; a text that starts with a comma attaches to 'means' ('means, with ...')."""
    return f'"{term}" means{text}' if text.startswith(",") else f'"{term}" means {text}'


def texts(spec: AgreementSpec):
    yield spec.title
    yield spec.running_header
    yield dated_line(spec)
    yield from spec.recitals
    for art in spec.articles:
        yield art.number
        yield art.title
        for sec in art.sections:
            yield sec.number
            yield sec.title
            yield from sec.paragraphs
            for term, text in (sec.definitions or {}).items():
                yield definition_paragraph(term, text)
            for cl in sec.clauses:
                yield cl.label
                yield cl.text
                for label, text in cl.subclauses:
                    yield label
                    yield text


def check_latin1(spec: AgreementSpec) -> None:
    for text in texts(spec):
        try:
            text.encode("latin-1")
        except UnicodeEncodeError as exc:
            bad = text[exc.start : exc.end]
            raise ValueError(f"not latin-1 (core fonts only): {bad!r} in {text[:60]!r}") from None
