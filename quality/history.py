"""The report folders over time: the trend of the last reports (read back from their summary.json, the
stored results of each run's checks) and `latest`, a link to the newest report folder."""

from __future__ import annotations

import json
import os
from pathlib import Path


def trend_point(name: str, summary: dict) -> dict:
    """One report as a row of the trend."""
    results = summary.get("results", [])
    health = summary.get("health", {})
    return {
        "report": name,
        "success": bool(summary.get("success")),
        "rows": int(summary.get("rows", 0)),
        "expectations": len(results),
        "failed": sum(1 for r in results if not r.get("success")),
        "health_mean": health.get("mean"),
    }


def trend(root: Path, current: str, summary: dict, limit: int) -> list[dict]:
    """The last `limit` reports under `root`, oldest first, ending with the current one (not written yet).
    Folder names start with their UTC time, so they sort by age; an unreadable summary is skipped."""
    points = []
    folders = (
        sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink() and p.name != current)
        if root.is_dir()
        else []
    )
    for folder in folders[-max(0, limit - 1) :] if limit > 1 else []:
        try:
            points.append(trend_point(folder.name, json.loads((folder / "summary.json").read_text(encoding="utf-8"))))
        except (OSError, ValueError):
            continue
    return [*points, trend_point(current, summary)]


def point_latest(folder: Path) -> None:
    """Make `<root>/latest` lead to `folder` (a relative symbolic link, replaced atomically)."""
    link = folder.parent / "latest"
    temporary = folder.parent / f".latest-{os.getpid()}"
    temporary.unlink(missing_ok=True)
    temporary.symlink_to(folder.name, target_is_directory=True)
    os.replace(temporary, link)
