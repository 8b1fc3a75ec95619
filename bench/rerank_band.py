"""The rerank band on Cairn's combined-score scale: the spec's [0.45, 0.60) mapped by matching quantiles.

    python -m bench.rerank_band [--work /tmp/cairn-eval] [--queries 0]

The retrieval spec's band (rule 11) reads its own merged score: 0.65 x vector + 0.35 x keyword. Cairn's combined
score weighs the same two legs 0.85 / 0.15 (0.75 / 0.25 for a question scoped by doc_tag), on the same
calibrated cosine scale, so one top candidate scores differently on the two. The map is fitted without labels,
as bench.calibrate fits the cosine scale: every dev question of the three sets (bench.eval's indexes in --work)
is asked twice, once fused with the spec's weights and once with Cairn's; the share of questions whose top
merged score falls under 0.45 (and under 0.60) on the spec's scale is read off, and Cairn's band ends are the
quantiles of Cairn's top scores at those shares: the band holds the same questions on both scales.
Results: bench/results/rerank_band.json.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from bench.common import DEFAULT_MODEL, require_shared, save
from bench.eval_corpora import DEV_SETS, GROUP, TENANT, DevSet, ingest
from bench.eval_memo import memo_reader

SPEC_BAND = (0.45, 0.60)
SPEC_WEIGHTS = {
    "vector_weight": 0.65,
    "keyword_weight": 0.35,
    "vector_weight_scoped": 0.65,
    "keyword_weight_scoped": 0.35,
}
TOP_ONLY = {"steps": {"gate": False, "floors": False, "rerank": False}}  # every question reaches fusion


def top_scores(dev: DevSet, weights: dict, limit: int | None, reader) -> list[float]:
    """The top merged (combined) score of each dev question under `weights`."""
    from cairn.embedding import encoder_for
    from cairn.query import Principal
    from cairn.query.retriever import Retriever
    from cairn.schemas.config import load_config

    config = load_config(dev.config)
    settings = config.query.model_copy(update={**TOP_ONLY, **weights})
    settings = type(settings)(**settings.model_dump())
    retriever = Retriever(config.milvus, settings, encoder_for(config.embedding), client=reader)
    principal = Principal(TENANT, [GROUP])
    return [
        retriever.retrieve(q.text, principal, k=10, doc_tag=q.doc_tag).diagnostics.get("combined_top", 0.0)
        for q in dev.queries[:limit]
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", default="scifact,runbooks,cuad")
    parser.add_argument("--queries", type=int, default=0, help="first N dev questions of each set (all: 0)")
    parser.add_argument("--work", default="/tmp/cairn-eval")
    args = parser.parse_args()
    require_shared()
    from cairn.schemas.config import load_config

    spec, cairn, per_set = [], [], {}
    for name in args.sets.split(","):
        dev = DEV_SETS[name](Path(args.work) / DEFAULT_MODEL, "auto", DEFAULT_MODEL)
        ingest(dev)
        reader = memo_reader(load_config(dev.config))
        theirs = top_scores(dev, SPEC_WEIGHTS, args.queries or None, reader)
        ours = top_scores(dev, {}, args.queries or None, reader)
        reader.close()
        spec += theirs
        cairn += ours
        per_set[name] = {
            "questions": len(ours),
            "in_spec_band_on_spec_scale": int(sum(SPEC_BAND[0] <= s < SPEC_BAND[1] for s in theirs)),
            "in_spec_band_on_cairn_scale": int(sum(SPEC_BAND[0] <= s < SPEC_BAND[1] for s in ours)),
        }
    shares = [float(np.mean(np.asarray(spec) < end)) for end in SPEC_BAND]
    band = [round(float(np.quantile(cairn, share)), 3) for share in shares]
    for name, entry in per_set.items():
        print(name, entry)
    print(
        f"spec band {SPEC_BAND} holds the questions from quantile {shares[0]:.3f} to {shares[1]:.3f} of the spec's "
        f"top scores; on Cairn's scale: rerank_band = ({band[0]}, {band[1]})"
    )
    save(
        "rerank_band",
        {
            "spec_band": list(SPEC_BAND),
            "quantiles": [round(s, 4) for s in shares],
            "rerank_band": band,
            "sets": per_set,
        },
    )


if __name__ == "__main__":
    main()
