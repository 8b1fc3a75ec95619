"""Incremental re-ingestion on the openshift runbooks: what an unchanged and a one-page run cost.

    python -m bench.incremental [--runs 3] [--store lite|server --uri http://host:19530]

In one process, on a scratch copy of the corpus: a first ingest through the real flow (wall time around
the flow call, Prefect included), then `runs` unchanged re-runs (median wall time; goal: <= 0.03 of the
first, with 0 embeddings computed), then one edited sentence in one page: embeddings computed against the
texts of that page that actually changed (re-derived by chunking both versions), and what that run cost beyond
its model time (`wall_minus_model_seconds`; `quality_seconds`: the data-quality check's part of it).

Then `small_run`: what a scheduled run with a handful of changed pages costs from the shell (#52's goal: its model
time + at most 5 s, idle). Each round edits SMALL_RUN_PAGES more pages and runs `cairn ingest --json` in a process
of its own, as cron runs it, timed around the process (interpreter start and imports included), the index server
warm. The first round finds no data-quality checks server (quality/server.py: this code's stopped first, as after
`worker_idle_seconds`): `cold`; the `--runs` rounds after it find it warm: their medians. The load average is
recorded beside them (the machine may be shared).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from bench.common import (
    add_store_arguments,
    bench_store,
    cairn_command,
    median,
    require_shared,
    save,
    scratch_config,
)

SMALL_RUN_GOAL_SECONDS = 5.0  # a small run's cost beyond its model time (#52)
SMALL_RUN_PAGES = 3  # pages edited in each small run's round


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


def edit_page(page: Path, mark: str) -> None:
    """One sentence added to a paragraph in the second half of the page."""
    text = page.read_text()
    paragraph_end = text.find("\n\n", len(text) // 2)
    paragraph_end = len(text) if paragraph_end < 0 else paragraph_end
    page.write_text(
        text[:paragraph_end] + f" This sentence was added by the incremental benchmark ({mark})." + text[paragraph_end:]
    )


def small_round(corpus: Path, config: Path, pages: list[Path], prefect_home: Path) -> dict:
    """`pages` edited, then `cairn ingest --json` in a process of its own: its wall, model and quality seconds."""
    for page in pages:
        edit_page(page, f"round {time.time_ns()}")
    run = cairn_command(["ingest", "--config", str(config), "--json"], prefect_home)
    report = run.json()
    model = report.get("model_seconds") or 0.0
    return {
        "pages": [page.relative_to(corpus).as_posix() for page in pages],
        "embeddings_computed": report["embeddings_computed"],
        "wall_seconds": round(run.seconds, 2),
        "model_seconds": round(model, 2),
        "wall_minus_model_seconds": round(run.seconds - model, 2),
        "quality_seconds": (report.get("quality") or {}).get("seconds"),
        "load_average": round(os.getloadavg()[0], 2),
    }


def small_run(corpus: Path, config: Path, work: Path, runs: int) -> dict:
    """A cold round (no checks server), then `runs` warm ones, each on SMALL_RUN_PAGES other pages (module doc)."""
    from cairn.quality import server

    pages = sorted(corpus.rglob("*.md"))[1::7]  # spread over the corpus's folders, the same on every run
    rounds = [pages[i * SMALL_RUN_PAGES : (i + 1) * SMALL_RUN_PAGES] for i in range(runs + 1)]
    server.stop()  # as after [quality] worker_idle_seconds: the first round starts one
    cold = small_round(corpus, config, rounds[0], work / "prefect-home")
    warm = [small_round(corpus, config, chosen, work / "prefect-home") for chosen in rounds[1:]]

    def middle(key: str) -> float:
        return round(median([r[key] or 0.0 for r in warm]), 2)

    return {
        "pages_per_round": SMALL_RUN_PAGES,
        "cold": cold,
        "rounds": warm,
        **{key: middle(key) for key in ("wall_seconds", "model_seconds", "wall_minus_model_seconds", "load_average")},
        "goal_wall_minus_model_seconds": SMALL_RUN_GOAL_SECONDS,
        "within_goal": sum(r["wall_minus_model_seconds"] <= SMALL_RUN_GOAL_SECONDS for r in warm),
    }


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
        small = small_run(corpus, Path(config), Path(tmp), args.runs)

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
        "small_run": small,
    }
    save("incremental", results)


if __name__ == "__main__":
    main()
