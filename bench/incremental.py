"""Incremental re-ingestion on the openshift runbooks: what an unchanged and a one-page run cost.

    python -m bench.incremental [--runs 3] [--store lite|server --uri http://host:19530]

In one process, on a scratch copy of the corpus: a first ingest through the real flow (wall time around
the flow call, Prefect included), then `runs` unchanged re-runs (median wall time; goal: <= 0.03 of the
first, with 0 embeddings computed), then one edited sentence in one page: embeddings computed against the
texts of that page that actually changed (re-derived by chunking both versions), and what that run cost beyond
its model time (`wall_minus_model_seconds`; `quality_seconds`: the data-quality check's part of it).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from bench.common import add_store_arguments, bench_store, median, require_shared, save, scratch_config


def model_inputs(path: Path, locator: str, source_name: str) -> set[str]:
    """The texts an ingest embeds for one page (abstract and child inputs)."""
    from cairn.chunkers import chunk_document
    from cairn.index.rows import abstract_input, child_input
    from cairn.schemas.config import ChunkingConfig, WikiSourceConfig
    from cairn.sources.wiki import WikiSource, version_hash

    source = WikiSource(WikiSourceConfig(name=source_name, type="wiki", path=str(path), tenant="bench", acl=["all"]))
    raw = (path / locator).read_bytes()
    doc = source.load(source.document_ref(locator, version_hash(raw)))
    texts = set()
    for section in chunk_document(doc, ChunkingConfig()):
        texts.add(abstract_input(doc, section))
        texts.update(child_input(doc, section, c.text) for c in section.chunks)
    return texts


def timed(flow, **kwargs) -> tuple[dict, float]:
    started = time.perf_counter()
    report = flow(**kwargs)
    return report, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    add_store_arguments(parser)
    args = parser.parse_args()
    shared = require_shared()
    from cairn.flows.ingest import ingest_flow

    with tempfile.TemporaryDirectory() as tmp, bench_store(args) as store:
        corpus = Path(tmp) / "openshift"
        shutil.copytree(shared / "corpora/wiki/openshift-runbooks", corpus)
        source = {"name": "openshift", "type": "wiki", "path": str(corpus), "tenant": "bench", "acl": ["all"]}
        config = str(scratch_config(Path(tmp), [source], store=store))
        first, first_wall = timed(ingest_flow, config_path=config)
        reruns = [timed(ingest_flow, config_path=config) for _ in range(args.runs)]
        rerun_walls = [wall for _, wall in reruns]

        page = max(corpus.rglob("*.md"), key=lambda p: p.stat().st_size)  # the longest page: the hardest case
        locator = page.relative_to(corpus).as_posix()
        before = model_inputs(corpus, locator, "openshift")
        text = page.read_text()
        paragraph_end = text.index("\n\n", len(text) // 2)
        page.write_text(
            text[:paragraph_end] + " This sentence was added by the incremental benchmark." + text[paragraph_end:]
        )
        after = model_inputs(corpus, locator, "openshift")
        edited, edited_wall = timed(ingest_flow, config_path=config)

    results = {
        "corpus": "openshift-runbooks",
        "store": store.describe(),
        "documents": first["documents"],
        "first_ingest": {
            "wall_seconds": round(first_wall, 2),
            "embeddings_computed": first["embeddings_computed"],
            "chunks": first["chunks"],
            "sections": first["sections"],
        },
        "unchanged_reruns": {
            "wall_seconds": [round(w, 2) for w in rerun_walls],
            "embeddings_computed": [r["embeddings_computed"] for r, _ in reruns],
            "rows_written": [r["rows_written"] for r, _ in reruns],
            "median_wall_ratio_to_first": round(median(rerun_walls) / first_wall, 4),
        },
        "one_page_edit": {
            "page": locator,
            "page_model_inputs": len(after),
            "changed_model_inputs": len(after - before),
            "embeddings_computed": edited["embeddings_computed"],
            "documents_indexed": edited["documents"]["indexed"],
            "wall_seconds": round(edited_wall, 2),
            "model_seconds": round(edited["model_seconds"], 2),
            # what the run cost beyond its model time (#52's goal for a small run: at most 5 s idle)
            "wall_minus_model_seconds": round(edited_wall - edited["model_seconds"], 2),
            "quality_seconds": (edited.get("quality") or {}).get("seconds"),
        },
    }
    save("incremental", results)


if __name__ == "__main__":
    main()
