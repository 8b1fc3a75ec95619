"""The anchor a Markdown renderer gives a heading, so that a deep link lands on it: GitHub's (github-slugger;
Hugo's default `autoHeadingIDType = "github"` is the same) and GitLab's (the same, runs of hyphens collapsed).
A section id stays Cairn's identity of a section; the anchor is only where its link points."""

from __future__ import annotations

import re

_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")  # [text](url) renders as its text
_TAG = re.compile(r"<[^>]+>")
_CUSTOM = re.compile(r"\s*\{#([\w\-]+)\}\s*$")  # Hugo/kramdown heading attribute: "## Setup {#install}"
_DROPPED = re.compile(r"[^\w\- ]", re.UNICODE)  # punctuation and symbols (emoji too); letters, digits, _ and - stay
ANCHOR_STYLES = ("github", "gitlab", "hugo")


def heading_anchor(heading: str) -> str:
    """GitHub's anchor of a heading's text: lower-case, markup and punctuation dropped, each space a hyphen (runs
    of hyphens kept, as GitHub does: "Diagnosis & Mitigation" -> "diagnosis--mitigation")."""
    custom = _CUSTOM.search(heading)
    if custom:
        return custom.group(1)
    text = _TAG.sub("", _LINK.sub(r"\1", heading.strip()))
    return _DROPPED.sub("", text.lower()).replace(" ", "-")


def styled(anchor: str, style: str) -> str:
    """A GitHub anchor as `style` renders it: GitLab collapses runs of hyphens; Hugo's default is GitHub's."""
    return re.sub(r"-{2,}", "-", anchor) if style == "gitlab" else anchor


class Anchors:
    """A page's anchors in heading order: a repeated heading gets -1, -2 ... (github-slugger's numbering)."""

    def __init__(self) -> None:
        self.occurrences: dict[str, int] = {}

    def claim(self, heading: str) -> str:
        original = anchor = heading_anchor(heading)
        while anchor in self.occurrences:
            self.occurrences[original] += 1
            anchor = f"{original}-{self.occurrences[original]}"
        self.occurrences[anchor] = 0
        return anchor
