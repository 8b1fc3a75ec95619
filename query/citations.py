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
from cairn.schemas.anchors import styled
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


def labels(
    title: str, breadcrumbs: list[str], section_text: str = "", child_text: str = "", query: str = ""
) -> list[str]:
    """The citation labels of a hit: its section's trail, then the headings inside the section that hold the
    match (rule 22, as #53 reads it): the first deeper heading (the "Step N" under a page's root section) and the
    deepest one holding the match ("Detail: draining"), in order, so that each subsection is cited as itself.
    The match is where the child sits in the section, at the subsection of the child holding most of the
    question's words when the child spans several. Markdown headings only (other layouts' sections start at
    their headings)."""
    base = trail(title, breadcrumbs)
    chain = _headings_above(section_text, child_text, query)
    if not chain:
        return base
    inner = [chain[0][1]] + ([chain[-1][1]] if len(chain) > 1 else [])
    own = _own_level(section_text, base[-1])
    if own is not None and chain[0][0] <= own:  # a sibling merged into the section: it replaces the section's own
        return [*base[:-1], *inner] if len(base) > 1 else [*base, *inner]
    return [*base, *inner]


def _own_level(section_text: str, last_label: str) -> int | None:
    """The Markdown level of the heading that opens the section, when it is the last label of its trail."""
    first = _HEADING.match(section_text.lstrip())
    if first and first.group(2).strip() == last_label:
        return len(first.group(1))
    return None


def _headings_above(section_text: str, child_text: str, query: str = "") -> list[tuple[int, str]]:
    """The headings inside the section that enclose the match, outermost first, without the section's own opening
    heading (levels, titles)."""
    span = _locate(section_text, child_text)
    if span is None:
        return []
    position = _match_point(section_text, span, query)
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


_TOKEN = re.compile(r"\w+", re.UNICODE)
_MARKUP = re.compile(r"\]\([^)]*\)|<[^>]+>")  # a Markdown link's target, an HTML tag: not in a child's text


def _locate(section_text: str, child_text: str) -> tuple[int, int] | None:
    """Where the child lies in the section, as (start, end) offsets: by its text up to whitespace, else by its
    words alone (a child may render markup differently: links, list markers, emphasis)."""
    if not section_text or not child_text.strip():
        return None
    flat, offsets = _flatten(section_text)
    probe = " ".join(child_text.split())
    at = flat.find(probe[:80])
    if at >= 0:
        tail = flat.find(probe[-80:], at)
        end = offsets[tail + len(probe[-80:]) - 1] + 1 if tail >= 0 else offsets[min(len(flat) - 1, at + len(probe))]
        return offsets[at], end
    masked = _MARKUP.sub(lambda m: " " * len(m.group(0)), section_text)  # same offsets, no link targets or tags
    words = [(m.group(0).lower(), m.start()) for m in _TOKEN.finditer(masked)]
    child = [m.group(0).lower() for m in _TOKEN.finditer(child_text)]
    if not child:
        return None
    first, last = child[:8], child[-8:]
    names = [w for w, _ in words]
    start = _find_run(names, first)
    if start is None:
        return None
    stop = _find_run(names, last, start)
    end_word = (stop + len(last) - 1) if stop is not None else min(len(words) - 1, start + len(child) - 1)
    return words[start][1], words[end_word][1] + len(words[end_word][0])


def _find_run(words: list[str], run: list[str], start: int = 0) -> int | None:
    for i in range(start, len(words) - len(run) + 1):
        if words[i : i + len(run)] == run:
            return i
    return None


def _match_point(section_text: str, span: tuple[int, int], query: str) -> int:
    """Where in the child's span the match is: its start, or, when headings inside the span split it, the start
    of the part holding most of the question's words (the first such part on a tie)."""
    start, end = span
    cuts = [m.start() for m in _HEADING.finditer(section_text) if start < m.start() < end]
    if not cuts or not query:
        return start
    wanted = {w.lower() for w in _TOKEN.findall(query) if len(w) > 2}
    bounds = [start, *cuts, end]
    parts = [(bounds[i], section_text[bounds[i] : bounds[i + 1]]) for i in range(len(bounds) - 1)]
    scored = [(sum(w.lower() in wanted for w in _TOKEN.findall(text)), -at, at) for at, text in parts]
    best = max(scored)
    return best[2] if best[0] > 0 else start


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
    """Where a section's link lands (#53: a link that clicks through): the page as published (a wiki source's
    link_template or a page's front matter `url`) or its source_uri, at its heading's anchor as the site
    renders it (chunkers/anchors.py; none for the text before a page's first heading). A row written before
    anchors were recorded keeps Cairn's section id as its anchor."""
    place = row.place
    if place.anchor is None and place.link is None:
        return f"{row.source_uri}#{row.section_id}"
    anchor = styled(place.anchor or "", place.anchor_style)
    link = place.link or row.source_uri
    if "{anchor}" in link:
        link = link.replace("{anchor}", anchor)
        return link[:-1] if link.endswith("#") else link
    return f"{link}#{anchor}" if anchor else link


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


def subsection_citations(row: ChunkRow, child_texts: list[str], query: str, cited: str) -> list[str]:
    """Rule 22 over every matched child of a hit: the citations of the subsections its other children sit under,
    each once and not the hit's own (`cited`), in the children's order: a section that packs three small
    subsections and matched in two cites both (#53)."""
    seen = {cited}
    more = []
    for text in child_texts:
        one = citation(row, labels(row.title, list(row.breadcrumbs), row.text, text, query))
        if one not in seen:
            seen.add(one)
            more.append(one)
    return more
