"""The ablation table of docs/benchmarks.md, from bench.eval's saved results: one row per variant
(bench/eval_variants.py), each metric with its difference from the default pipeline, and what the variant adds to a
question's time; rewritten between its two markers only, and only from results that hold every set, variant and
question."""

from __future__ import annotations

from pathlib import Path

from bench.common import REPO
from bench.eval_corpora import DEV_SETS
from bench.eval_variants import LABELS, VARIANTS

# (set, metric, column heading); "held_out:ndcg@10" reads the held-out half's metric
COLUMNS = [
    ("scifact", "ndcg@10", "SciFact nDCG@10"),
    ("scifact", "held_out:ndcg@10", "SciFact nDCG@10, held-out half"),
    ("scifact", "recall@10", "SciFact recall@10"),
    ("runbooks", "recall@5", "runbooks recall@5"),
    ("runbooks", "ndcg@10", "runbooks nDCG@10"),
    ("cuad", "recall@5", "CUAD answer in top 5"),
    ("cuad", "ndcg@10", "CUAD nDCG@10"),
]
COST_SET = "scifact"  # the set whose questions the cost column times: its passages are the longest of the three
COST_TITLE = "added time a question, ms p50 / p95 (SciFact)"
TABLE_PAGE = REPO / "docs" / "benchmarks.md"  # the page that holds the ablation table, between these markers
TABLE_START = (
    "<!-- ablation table: written by "
    "`python -m bench.eval --sets scifact,runbooks,cuad --scifact-queries 0 --table` -->"
)
TABLE_END = "<!-- end of the ablation table -->"


def _metric(run: dict, metric: str) -> float | None:
    """A run's metric; "half:metric" reads one half's (None when the run predates halves or lacks that half)."""
    if ":" in metric:
        part, name = metric.split(":", 1)
        return run.get("halves", {}).get(part, {}).get(name)
    return run["metrics"][metric]


def ablation_table(results: dict) -> str:
    """Markdown: one row per variant, each metric with its difference from the default pipeline."""
    sets = results["sets"]
    head = "| variant | " + " | ".join(title for _, _, title in COLUMNS) + f" | {COST_TITLE} |"
    lines = [head, "|---" * (len(COLUMNS) + 2) + "|"]
    for variant in VARIANTS:
        cells = []
        for name, metric, _ in COLUMNS:
            entry = sets.get(name, {}).get("variants", {})
            if variant not in entry:
                cells.append("")
                continue
            value, base = _metric(entry[variant], metric), _metric(entry["full"], metric)
            if value is None or base is None:
                cells.append("")
            else:
                change = round(value - base, 3) + 0.0  # + 0.0: a difference that rounds to nothing is +0.000
                cells.append(f"{value:.3f}" if variant == "full" else f"{value:.3f} ({change:+.3f})")
        cells.append(_cost(sets.get(COST_SET, {}).get("variants", {}).get(variant)))
        lines.append(f"| {LABELS[variant]} | " + " | ".join(cells) + " |")
    queries = ", ".join(
        f"{name} {sets[name]['variants']['full']['queries']}"
        + (
            f" of a {sets[name]['documents']['indexed']}-abstract subset (bench.eval_corpora.scifact)"
            if sets[name].get("subset")
            else ""
        )
        + (f" (measured {sets[name]['measured']})" if "measured" in sets[name] else "")
        for name in ("scifact", "runbooks", "cuad")
        if name in sets
    )
    lines.append("")
    lines.append(
        f"Queries: {queries}; k = {results['k']}; model {results.get('model', 'all-MiniLM-L6-v2')}, "
        f"backend {results['backend']}. In parentheses: the difference from the default pipeline."
    )
    return "\n".join(lines)


def _cost(run: dict | None) -> str:
    """What a variant adds to a question's time: the reranker's model, p50 / p95 (the other steps' cost is the same
    in every variant, within a few ms; the whole retrieve's is bench.rerank_cost's)."""
    if run is None:
        return ""
    if not run.get("reranked"):
        return "0"
    return f"{run['rerank_ms_p50']:.0f} / {run['rerank_ms_p95']:.0f}"


def merge_sets(previous: dict | None, results: dict) -> dict:
    """This run's sets over those an earlier run of the same model, backend and k saved: a set is replaced
    whole, never mixed; results of another model, backend or k are not carried over."""
    if not previous or any(previous.get(key) != results.get(key) for key in ("k", "model", "backend")):
        return results
    return {**results, "sets": {**previous.get("sets", {}), **results["sets"]}}


def incomplete(results: dict) -> list[str]:
    """What the ablation table still lacks: a dev set, a variant of one, or some of a set's questions."""
    missing = []
    for name in DEV_SETS:
        entry = results["sets"].get(name)
        if entry is None:
            missing.append(f"the {name} set")
            continue
        absent = [v for v in VARIANTS if v not in entry["variants"]]
        if absent:
            missing.append(f"{name}: the variants {', '.join(absent)}")
        asked = entry["variants"].get("full", {}).get("queries")
        if asked != entry["queries_available"]:
            missing.append(f"{name}: {asked} of its {entry['queries_available']} questions")
    return missing


def write_table(results: dict, page: Path = TABLE_PAGE) -> None:
    """Rewrite the ablation table between its markers in `page`, leaving the rest of the page as it is."""
    text = page.read_text(encoding="utf-8")
    if TABLE_START not in text or TABLE_END not in text:
        raise SystemExit(f"{page}: the ablation table's markers are missing")
    before, rest = text.split(TABLE_START, 1)
    after = rest.split(TABLE_END, 1)[1]
    page.write_text(f"{before}{TABLE_START}\n{ablation_table(results)}\n{TABLE_END}{after}", encoding="utf-8")
