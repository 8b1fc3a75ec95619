"""Shared by the benchmarks: scratch configs, the shared corpora, medians."""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
RESULTS = REPO / "bench" / "results"


def require_shared() -> Path:
    if not (SHARED / "corpora").is_dir():
        print("../shared/corpora is absent: nothing to measure", file=sys.stderr)
        sys.exit(0)
    return SHARED


def scratch_config(workdir: Path, sources: list[dict], collection: str = "bench", backend: str = "torch") -> Path:
    lines = [
        f"state_path = {json.dumps(str(workdir / 'index' / 'state.sqlite'))}",
        "[milvus]", f"uri = {json.dumps(str(workdir / 'index' / 'cairn.db'))}", f"collection = {json.dumps(collection)}",
        "[embedding]", f"cache_path = {json.dumps(str(workdir / 'index' / 'embeddings.sqlite'))}",
        f"backend = {json.dumps(backend)}",
    ]
    for source in sources:
        lines.append("[[sources]]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in source.items()]
    path = workdir / "cairn.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def save(name: str, data: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(data, indent=2) + "\n")
    print(json.dumps(data, indent=2))
    print(f"written to {path}", file=sys.stderr)
    return path
