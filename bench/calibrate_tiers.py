"""The spec's score lines (confidence tiers, the low-relevance flag, the floor) on Cairn's combined scale.

    python -m bench.calibrate_tiers [--work /tmp/cairn-eval] [--scifact-queries 0]

The retrieval spec sets its lines (rule 4: HIGH 0.85 with direct matches above 0.75, MEDIUM 0.65, LOW 0.45; rule
13: low relevance under 0.50; rule 10: the floor 0.45) on its own combined score, 0.65 x cosine + 0.35 x BM25 /
best BM25 (rule 8), cosines on all-MiniLM-L6-v2's scale. Cairn's cosines are mapped onto that scale already
(embedding/model.py cosine_scale, bench/calibrate.py); what differs is the weighting: 0.85 / 0.15 (0.75 / 0.25
for a question scoped by doc_tag). Both scores are computed for the same candidates (every dev question of the
three sets through the two search legs, without labels: the top 10 by Cairn's score), and the two score
distributions are matched as bench/calibrate.py matches two models' cosines: their quantiles 5%..95% fitted by
least squares, cairn ~ a x spec + b, and a spec line t maps to a x t + b. (The quantile of t itself is printed
too: the dev questions all have answers, so the low lines sit in the far tail, where one quantile is noise.)
Unscoped (SciFact, runbooks) and scoped (CUAD) questions are fitted apart. The candidates' scores are kept in
--work (tiers-pairs.json) for a re-run with --reuse. Results: bench/results/tiers.json.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from bench.common import DEFAULT_MODEL, require_shared, save
from bench.eval_corpora import DEV_SETS, GROUP, TENANT, DevSet, ingest

SPEC_WEIGHTS = (0.65, 0.35)
# line -> (spec value, which scores it reads: "top" = the best candidate, "any" = each of the top 10)
LINES = {
    "confidence_high": (0.85, "top"),
    "confidence_direct": (0.75, "any"),
    "confidence_medium": (0.65, "top"),
    "confidence_low": (0.45, "top"),
    "low_relevance": (0.50, "any"),
    "combined_floor": (0.45, "top"),
}


def scores(dev: DevSet, limit: int | None) -> dict[str, list[tuple[float, float]]]:
    """(Cairn's combined, the spec's combined) of each question's top-10 candidates and of its top one."""
    from cairn.embedding import encoder_for
    from cairn.query.filters import search_filter
    from cairn.query.fusion import fuse, leg_weights
    from cairn.query.retriever import connect
    from cairn.query.search import Search
    from cairn.schemas import Principal
    from cairn.schemas.config import load_config

    config = load_config(dev.config)
    settings = config.query
    encoder = encoder_for(config.embedding)
    reader = connect(config.milvus)
    principal = Principal(TENANT, [GROUP])
    found: dict[str, list[tuple[float, float]]] = {"any": [], "top": []}
    for query in dev.queries[:limit]:
        scoped = query.doc_tag is not None
        vectors = [v.tolist() for v in encoder.encode_queries([query.text])]
        legs = Search(reader, settings, encoder.identity).legs(
            query.text, vectors, search_filter(principal, None, query.doc_tag, None), settings.candidates
        )
        vw, kw = leg_weights(settings, scoped, True, True)
        ranked = fuse(legs.candidates, legs.rankings, "weighted", settings.rrf_k, vw, kw)[:10]
        pairs = [
            (c.combined, SPEC_WEIGHTS[0] * min(max(c.vector, 0.0), 1.0) + SPEC_WEIGHTS[1] * c.keyword_norm)
            for c in ranked
        ]
        found["any"] += pairs
        found["top"] += pairs[:1]
    reader.close()
    return found


QUANTILES = np.linspace(0.05, 0.95, 19)


def fit(pairs: list[tuple[float, float]]) -> tuple[float, float, float]:
    """Least squares over matched quantiles: cairn ~ a x spec + b. Returns (a, b, mean absolute error)."""
    cairn, spec = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    x, y = np.quantile(spec, QUANTILES), np.quantile(cairn, QUANTILES)
    a, b = np.polyfit(x, y, 1)
    return float(a), float(b), float(np.mean(np.abs(a * x + b - y)))


def mapped(pairs: list[tuple[float, float]], line: float) -> tuple[float, float]:
    """The Cairn score at the quantile the spec's `line` sits at, and that quantile."""
    cairn, spec = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    share = float(np.mean(spec <= line))
    return float(np.quantile(cairn, share)), share


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", default="/tmp/cairn-eval")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--scifact-queries", type=int, default=0, help="first N dev queries (all: 0)")
    parser.add_argument("--reuse", action="store_true", help="the scores of the last run (--work/tiers-pairs.json)")
    args = parser.parse_args()
    require_shared()
    work = Path(args.work) / args.model
    kept = work / "tiers-pairs.json"
    groups = {"unscoped": ("scifact", "runbooks"), "scoped": ("cuad",)}
    pooled: dict[str, dict[str, list[tuple[float, float]]]] = {}
    if args.reuse and kept.exists():
        pooled = json.loads(kept.read_text())
    else:
        for group, names in groups.items():
            pooled[group] = {"any": [], "top": []}
            for name in names:
                dev = DEV_SETS[name](work, "auto", args.model)
                ingest(dev)
                limit = (args.scifact_queries or None) if name == "scifact" else None
                for kind, pairs in scores(dev, limit).items():
                    pooled[group][kind] += pairs
        kept.write_text(json.dumps(pooled))
    results: dict = {"model": args.model, "spec_weights": SPEC_WEIGHTS, "fits": {}, "lines": {}}
    for group in groups:
        a, b, error = fit(pooled[group]["any"])
        results["fits"][group] = {"a": round(a, 4), "b": round(b, 4), "mean_error": round(error, 4)}
        print(f"{group:9} cairn = {a:.3f} x spec + {b:.3f} (mean error {error:.3f} over the quantiles)")
        for line, (value, kind) in LINES.items():
            at_quantile, share = mapped(pooled[group][kind], value)
            results["lines"].setdefault(line, {"spec": value, "reads": kind})[group] = {
                "cairn": round(a * value + b, 3),
                "at_quantile": round(at_quantile, 3),
                "quantile": round(share, 3),
            }
            print(
                f"{group:9} {line:18} spec {value:.2f} -> {a * value + b:.3f} "
                f"(the same quantile, {share:.3f}: {at_quantile:.3f})"
            )
    save("tiers", results)


if __name__ == "__main__":
    main()
