"""How a section is cited (rules 17 and 22):
`{title} › {breadcrumbs}[ › {detail}] (v{hash7}, updated {date}[, pp. a-b], tenant {tenant})` + deep link.

The detail: a section often holds deeper headings of its own (small subsections are packed into one section,
chunkers/sections.py); the hit child sits under one of them, which the section's breadcrumbs do not name. The
citation keeps the section's heading path and adds the first deeper heading above the child ("Step 3 › Verify
replication"); a sibling heading the section was merged with takes the place of the section's own.
"""

from __future__ import annotations

import re

from cairn.schemas import from_epoch
from cairn.schemas.rows import ChunkRow

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)


def trail(title: str, breadcrumbs: list[str]) -> list[str]:
    """Title, then the heading path without repeating the title (pages whose H1 is the title start with it);
    every level kept in order, so a "Step N" parent and its detail label both show."""
    crumbs = [b for b in breadcrumbs if b]
    while crumbs and crumbs[0] == title:
        crumbs = crumbs[1:]
    deduped = [c for i, c in enumerate(crumbs) if i == 0 or c != crumbs[i - 1]]
    return [title, *deduped]


def labels(title: str, breadcrumbs: list[str], section_text: str = "", child_text: str = "") -> list[str]:
    """The citation labels of a hit: its section's trail, with the heading path inside the section down to the
    child that matched (rule 22: the parent "Step N" heading and the first deeper "Detail" heading, in order).
    Markdown headings only (other layouts' sections start at their headings)."""
    base = trail(title, breadcrumbs)
    chain = _headings_above(section_text, child_text)
    if not chain:
        return base
    own = _own_level(section_text, base[-1])
    if own is not None and chain[0][0] <= own:  # a sibling merged into the section: it replaces the section's own
        inner = [t for _, t in chain[:2]]
        return [*base[:-1], *inner] if len(base) > 1 else [*base, *inner]
    return [*base, chain[0][1]]


def _own_level(section_text: str, last_label: str) -> int | None:
    """The Markdown level of the heading that opens the section, when it is the last label of its trail."""
    first = _HEADING.match(section_text.lstrip())
    if first and first.group(2).strip() == last_label:
        return len(first.group(1))
    return None


def _headings_above(section_text: str, child_text: str) -> list[tuple[int, str]]:
    """The headings inside the section that enclose where the child text starts, outermost first, without the
    section's own opening heading (levels, titles)."""
    probe = " ".join(child_text.split())[:80]
    if not section_text or not probe:
        return []
    flat, offsets = _flatten(section_text)
    at = flat.find(probe)
    if at < 0:
        return []
    position = offsets[at]
    stack: list[tuple[int, str]] = []
    opening = _HEADING.match(section_text.lstrip())
    opening_start = len(section_text) - len(section_text.lstrip()) if opening else -1
    for match in _HEADING.finditer(section_text):
        if match.start() > position:
            break
        if match.start() == opening_start:
            continue
        level = len(match.group(1))
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, match.group(2).strip()))
    return stack


def _flatten(text: str) -> tuple[str, list[int]]:
    """The text with every run of whitespace as one space, and for each of its characters the offset in `text`
    (children reproduce their section up to whitespace, chunkers/children.py)."""
    chars: list[str] = []
    offsets: list[int] = []
    space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            space = bool(chars)
            continue
        if space:
            chars.append(" ")
            offsets.append(i)
            space = False
        chars.append(ch)
        offsets.append(i)
    return "".join(chars), offsets


def deep_link(row: ChunkRow) -> str:
    return f"{row.source_uri}#{row.section_id}"


def citation(row: ChunkRow, where: list[str] | None = None) -> str:
    """`where`: the labels (default: the section's trail). The tenant is named (rule 17: one collection holds
    every tenant, so a citation says whose document it is)."""
    where = where or trail(row.title, list(row.breadcrumbs))
    updated = from_epoch(row.updated_at)
    details = [f"v{row.version_hash[:7]}", f"updated {updated.date().isoformat() if updated else 'unknown'}"]
    pages = row.pages.label
    if pages:
        details.append(pages)
    if row.tenant_id:
        details.append(f"tenant {row.tenant_id}")
    return f"{' › '.join(where)} ({', '.join(details)}) {deep_link(row)}"
