"""The report folders over time: the trend of the last full reports (read back from their summary.json, the
stored results of each run's checks) and `latest`, a link to the newest full report folder.

Only full reports are compared: a report of one source, one tenant or the documents one ingest wrote counts
other rows, and beside full reports in a trend its smaller row count and fewer checks read as a change.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from cairn.quality import scope

LATEST = "latest"


def trend_point(name: str, summary: dict) -> dict:
    """One report as a point of the trend."""
    results = summary.get("results", [])
    health = summary.get("health", {})
    return {
        "report": name,
        "full": scope.read(name, summary).full,
        "success": bool(summary.get("success")),
        "rows": int(summary.get("rows", 0)),
        "expectations": len(results),
        "failed": sum(1 for r in results if not r.get("success")),
        "health_mean": health.get("mean"),
    }


def report_folders(root: Path) -> list[Path]:
    """The report folders under `root`, oldest first (their names start with their UTC time)."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink() and (p / "summary.json").exists())


def read_summary(folder: Path) -> dict | None:
    try:
        summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return summary if isinstance(summary, dict) else None


def is_full(folder: Path) -> bool:
    """Whether the report in `folder` is a full report (false for one whose summary cannot be read)."""
    stored = read_summary(folder)
    return stored is not None and scope.read(folder.name, stored).full


def trend(root: Path, current: str, summary: dict, limit: int) -> list[dict]:
    """The last `limit` full reports under `root`, oldest first, ending with the current one (not written yet)
    when it is full. Reports of part of the index are left out; so is an unreadable summary."""
    now = trend_point(current, summary)
    wanted = limit - 1 if now["full"] else limit
    points: list[dict] = []
    for folder in reversed(report_folders(root)):  # newest first, until enough full ones
        if len(points) >= wanted:
            break
        if folder.name == current:
            continue
        stored = read_summary(folder)
        if stored is not None and scope.read(folder.name, stored).full:
            points.append(trend_point(folder.name, stored))
    return [*reversed(points), *([now] if now["full"] else [])]


def latest_target(root: Path) -> Path | None:
    """The folder `<root>/latest` leads to, if it leads to one."""
    link = root / LATEST
    target = link.resolve() if link.is_symlink() else None
    return target if target is not None and target.is_dir() else None


def point_latest(folder: Path, full: bool) -> bool:
    """Make `<root>/latest` lead to `folder` (a relative symbolic link, replaced atomically) when it is a full
    report, or when `latest` leads to no full report yet (an index only ever checked after ingests). True when
    it was moved."""
    current = latest_target(folder.parent)
    if not full and current is not None and is_full(current):
        return False
    link = folder.parent / LATEST
    temporary = folder.parent / f".latest-{os.getpid()}"
    temporary.unlink(missing_ok=True)
    temporary.symlink_to(folder.name, target_is_directory=True)
    os.replace(temporary, link)
    return True
