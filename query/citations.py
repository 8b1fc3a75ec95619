"""Step 10: how a section is cited. `{title} › {breadcrumbs} (v{hash7}, updated {date}[, pp. a-b])` + deep link."""

from __future__ import annotations

from typing import Any

from cairn.query.types import Row
from cairn.schemas import from_epoch


def trail(title: str, breadcrumbs: list[str]) -> list[str]:
    """Title, then the heading path without repeating the title (pages whose H1 is the title start with it);
    every level kept in order, so a "Step N" parent and its detail label both show."""
    crumbs = [b for b in breadcrumbs if b]
    while crumbs and crumbs[0] == title:
        crumbs = crumbs[1:]
    deduped = [c for i, c in enumerate(crumbs) if i == 0 or c != crumbs[i - 1]]
    return [title, *deduped]


def page_range(extra: dict[str, Any] | None) -> str:
    extra = extra or {}
    start, end = extra.get("page_start"), extra.get("page_end")
    if start is None:
        return ""
    return f"p. {start}" if end in (None, start) else f"pp. {start}-{end}"


def deep_link(row: Row) -> str:
    return f"{row['source_uri']}#{row['section_id']}"


def citation(row: Row) -> str:
    where = " › ".join(trail(row["title"], list(row["breadcrumbs"])))
    updated = from_epoch(row.get("updated_at"))
    details = [f"v{row['version_hash'][:7]}", f"updated {updated.date().isoformat() if updated else 'unknown'}"]
    pages = page_range(row.get("extra"))
    if pages:
        details.append(pages)
    return f"{where} ({', '.join(details)}) {deep_link(row)}"
