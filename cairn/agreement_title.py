"""What names an agreement: the title line of a contract ("Exhibit 10.1 CONSULTING AGREEMENT" names "CONSULTING
AGREEMENT"). Shared by the PDF source (the document's title) and the legal layout (the section the title opens),
so that both name a contract the same way. It lives in the package root, beside cairn.redact, because those two
layers may not import each other (tests/unit/test_package_layout.py), and schemas/ holds records."""

from __future__ import annotations

import re

# "MASTER SERVICES AGREEMENT", "Exhibit 10.1 CONSULTING AGREEMENT" (the exhibit label is not the title),
# "Software License, Customization and Maintenance Agreement": a short block naming the agreement
_CAPS_TITLE = re.compile(r"(?<![\w.])((?:[A-Z][A-Z&’'\-]*,?\s+){0,9}(?:AGREEMENT|CONTRACT))(?![\w])")
_CASED_TITLE = re.compile(
    r"^(?:Exhibit\s+[\d.]+\s+)?((?:(?:[A-Z][\w’'\-]*,?|and|of|for|the|to|&)\s+){1,9}(?:Agreement|Contract))$"
)
_NOT_TITLE_WORDS = ("THIS", "THE", "EXHIBIT", "EXECUTION", "COPY", "VERSION")


def agreement_title(block: str) -> str:
    """The agreement's name in a block ("Exhibit 10.1 CONSULTING AGREEMENT" -> "CONSULTING AGREEMENT"), or ""."""
    block = " ".join(block.split())
    if match := _CASED_TITLE.match(block):
        return match.group(1)
    match = _CAPS_TITLE.search(block[:300])
    # "10. COVENANTS RELATING TO THE AGREEMENT" opens a clause or a contents line, not an agreement
    if not match or re.match(r"^\d{1,2}\.", block):
        return ""
    words = match.group(1).replace(",", " ").split()
    while words and words[0] in _NOT_TITLE_WORDS:
        words.pop(0)
    return " ".join(match.group(1).split()[len(match.group(1).split()) - len(words) :]) if len(words) > 1 else ""
