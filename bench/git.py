"""The git source on terraform-aws-eks (1,246 commits): a full ingest at an older commit, then an
incremental run to a commit ~50 commits later.

    python -m bench.git [--gap 50]

Prints files, sections, chunks, seconds and SLA shares (parents in 400-900 tokens, among documents that
have 400 tokens and overall; children in 100-200) for the full ingest, then files processed vs files in the
repository and wall time vs the full ingest for the incremental run. Wall times are around the flow call,
Prefect included; the embedding cache starts empty.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

from bench.common import require_shared, save, scratch_config


def sla(config_path: str) -> dict:
    from cairn.index.store import MilvusStore
    from cairn.schemas.config import load_config

    config = load_config(config_path)
    store = MilvusStore(config.milvus, dim=384)
    store.ensure_collection()
    try:
        rows = list(store.iterate("is_current == true", ["chunk_type", "token_count", "extra", "document_id"]))
    finally:
        store.close()
    parents = [r for r in rows if r.chunk_type == "full_text"]
    children = [r for r in rows if r.chunk_type == "child"]
    doc_tokens: dict[str, int] = {}
    for r in parents:
        doc_tokens[r.document_id] = doc_tokens.get(r.document_id, 0) + r.token_count
    big = [r for r in parents if doc_tokens[r.document_id] >= 400]

    def share(items, lo, hi):
        return round(sum(lo <= r.token_count <= hi for r in items) / len(items), 3) if items else None

    return {
        "documents": len(doc_tokens),
        "sections": len(parents),
        "chunks": len(children),
        "parents_in_band_of_documents_with_400_tokens": share(big, 400, 900),
        "parents_in_band_overall": share(parents, 400, 900),
        "children_in_band": share(children, 100, 200),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gap", type=int, default=50, help="commits between the full and the incremental run")
    args = parser.parse_args()
    shared = require_shared()
    bundle = shared / "corpora/git/terraform-aws-eks.bundle"
    from cairn.flows.ingest import ingest_flow

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        heads = subprocess.run(["git", "bundle", "list-heads", str(bundle)], capture_output=True, text=True, check=True)
        head = heads.stdout.split()[0]
        mirror = work / "clone"
        subprocess.run(["git", "clone", "--quiet", "--bare", str(bundle), str(mirror)], check=True)
        log = subprocess.run(
            ["git", "--git-dir", str(mirror), "rev-list", "--first-parent", head],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        older = log[args.gap]
        source = {
            "name": "eks",
            "type": "git",
            "repo": str(bundle),
            "tenant": "bench",
            "acl": ["all"],
            "cache_dir": str(work / "git"),
            "include": ["**/*.tf", "**/*.md", "**/*.yaml", "**/*.yml"],
        }
        config = str(scratch_config(work, [dict(source, ref=older)]))
        started = time.perf_counter()
        full = ingest_flow(config_path=config)
        full_wall = time.perf_counter() - started
        full_sla = sla(config)
        config = str(scratch_config(work, [dict(source, ref=head)]))
        started = time.perf_counter()
        incremental = ingest_flow(config_path=config)
        incremental_wall = time.perf_counter() - started
        changed = subprocess.run(
            ["git", "--git-dir", str(mirror), "diff", "--name-only", older, head],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    d = incremental["documents"]
    save(
        "git",
        {
            "corpus": "terraform-aws-eks.bundle",
            "full_ref": older,
            "incremental_ref": head,
            "gap_commits": args.gap,
            "full": {
                "files": full["documents"]["seen"],
                "failed": full["documents"]["failed"],
                "seconds": round(full_wall, 1),
                **full_sla,
            },
            "incremental": {
                "files_in_repo": d["seen"],
                "files_processed": d["indexed"] + d["deleted"] + d["failed"],
                "indexed": d["indexed"],
                "deleted": d["deleted"],
                "unchanged": d["unchanged"],
                "paths_changed_in_git_diff": len(changed),
                "seconds": round(incremental_wall, 1),
                "wall_vs_full": round(incremental_wall / full_wall, 3),
            },
        },
    )


if __name__ == "__main__":
    main()
