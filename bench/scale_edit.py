"""bench.scale's edit phase (bench/scale.py): rounds of 1% of the pages edited and 1% deleted, each run's wall over
the model's time for the texts that changed (the run's own, and the model alone in this process)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bench.common import median
from bench.incremental import model_inputs
from bench.scale_corpus import SOURCE, changes, edited, page

if TYPE_CHECKING:
    from bench.scale import Bench


def edit(bench: Bench, config_path: Path, corpus: Path, pages: int) -> dict:
    """`--runs` rounds, each on other pages: 1% of the pages edited, 1% deleted, one run. Each run's wall over the
    model's time for the texts that changed, two ways: the run's own (its report's `model_seconds`, under the same
    conditions as its wall) and the model alone in this process afterwards (this machine's model time alone varies
    by up to 2x from one measurement to the next); the medians, and the rounds within the goal (2x + 3 s) by the
    run's own model time."""
    rounds: list[dict] = []
    for i in range(bench.args.runs):
        spared = {page for done in rounds for page in done["touched"]}
        rounds.append(edit_round(bench, config_path, corpus, pages, bench.args.seed + i, spared))
    for done in rounds:
        del done["touched"]

    def middle(key: str) -> float:
        return round(median([r[key] or 0 for r in rounds]), 2)

    return {
        "rounds": rounds,
        "round_count": len(rounds),
        **{
            key: middle(key)
            for key in ("wall_seconds", "run_model_seconds", "wall_over_run_model", "model_seconds", "wall_over_model")
        },
        "within_goal": sum(r["wall_seconds"] <= 2 * r["run_model_seconds"] + 3 for r in rounds),
    }


def edit_round(bench: Bench, config_path: Path, corpus: Path, pages: int, seed: int, spared: set[int]) -> dict:
    """Edit and delete the pages `changes(seed)` picks (none of `spared`), run, measure."""
    from cairn.schemas.config import load_config

    name = SOURCE["name"]
    edits, deletes = ([i for i in picked if i not in spared] for picked in changes(seed, pages))
    paths = {i: page(bench.args.seed, i).path for i in edits + deletes}
    before = set().union(*(model_inputs(corpus, paths[i], name) for i in edits))
    for i in edits:
        target = corpus / paths[i]
        target.write_text(edited(target.read_text(encoding="utf-8"), seed, i), encoding="utf-8")
    for i in deletes:
        (corpus / paths[i]).unlink()
    changed = sorted(set().union(*(model_inputs(corpus, paths[i], name) for i in edits)) - before)
    run = bench.cairn("ingest", "--config", str(config_path))
    model = bench.model_seconds(load_config(config_path).embedding, changed)
    return {
        "pages_edited": len(edits),
        "pages_deleted": len(deletes),
        "touched": edits + deletes,
        "changed_texts": len(changed),
        "embeddings_computed": run["output"]["embeddings_computed"],
        "documents": run["output"]["documents"],
        "wall_seconds": run["wall_seconds"],
        "run_report_seconds": run["output"]["seconds"],
        "quality_seconds": (run["output"].get("quality") or {}).get("seconds"),
        "run_model_seconds": run["output"].get("model_seconds"),  # the model's seconds inside the run
        "wall_over_run_model": ratio(run["wall_seconds"], run["output"].get("model_seconds")),
        "model_seconds": round(model, 2),  # the model alone, here, afterwards
        "wall_over_model": ratio(run["wall_seconds"], model),
    }


def ratio(wall: float, model: float | None) -> float | None:
    return round(wall / model, 2) if model else None  # goal: <= 2 + 3 s / model
