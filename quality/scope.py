"""What a data-quality report covers: every current row (a full report), one source or tenant, the documents an
ingest or backfill wrote, or rows a caller selected. Only full reports are comparable with each other: the trend
is drawn over them, and `latest` leads to the newest of them (quality/history.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cairn.index.derived import Rows

FULL = "full"
Ledger = tuple[Path, "Rows"]  # a derived ledger's file, and the rows of it a report covers


@dataclass(frozen=True)
class Scope:
    kind: str  # "full", "source", "tenant", "ingest" or "rows"
    description: str  # what the page's header says
    # Where the covered rows' check outcomes are kept, and which they are (quality/stored.py): the report counts
    # every one of them, checked in it or before. None: the report covers the rows it checks, no more.
    ledger: Ledger | None = field(default=None, compare=False)

    @property
    def full(self) -> bool:
        return self.kind == FULL

    def to_dict(self) -> dict:
        return {"kind": self.kind, "description": self.description}


def full_report(ledger: Ledger | None = None) -> Scope:
    return Scope(FULL, "full report: every current row of every source", ledger)


def of(source: str | None, tenant: str | None, ledger: Ledger | None = None) -> Scope:
    """`cairn report` with --source and/or --tenant (neither: a full report)."""
    if not source and not tenant:
        return full_report(ledger)
    parts = [f"source {source}" if source else "", f"tenant {tenant}" if tenant else ""]
    return Scope("source" if source else "tenant", "one " + " and ".join(p for p in parts if p) + " only", ledger)


def after_ingest(run_id: str, written: dict[str, list[str]], ledger: Ledger | None = None) -> Scope:
    """The check after an ingest or backfill: only the current rows of the documents it wrote."""
    documents = sum(len(ids) for ids in written.values())
    return Scope(
        "ingest",
        f"after run {run_id[:8]}: the {documents} document(s) it wrote in {', '.join(sorted(written))}",
        ledger,
    )


def rows(expr: str) -> Scope:
    """A caller's own selection (quality.check_rows): full when it selects every current row."""
    if " ".join(expr.split()) == "is_current == true":
        return full_report()
    return Scope("rows", f"the rows where {expr}")


def read(name: str, summary: dict) -> Scope:
    """The scope a stored summary.json records; a report written before scopes were recorded is full when
    `cairn report` wrote it over everything (its folder ends in -report-all)."""
    stored = summary.get("scope")
    if isinstance(stored, dict) and isinstance(stored.get("kind"), str):
        return Scope(stored["kind"], str(stored.get("description", "")))
    return full_report() if name.endswith("-report-all") else Scope("rows", "")
