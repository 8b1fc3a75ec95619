"""The cosine scale of an embedding model: a x cosine + b, so the [query] settings mean the same with it.

    python -m bench.calibrate --model bge-small-en-v1.5 [--work /tmp/cairn-eval]

Cairn's floors, confidence tiers and second-pass band were set on all-MiniLM-L6-v2's cosines. Another model
spreads its cosines differently (bge-small-en-v1.5 puts unrelated texts near 0.4 where MiniLM puts them near
0.1), so its cosines are mapped onto MiniLM's scale before any setting reads them (embedding/model.py
ModelSpec.cosine_scale, applied in query/search.py). The map is fitted without labels: every dev question of
the three sets (bench.eval's indexes, --work/<model>/<set>, built by `python -m bench.eval --model ...`) is run through
the dense leg alone with each model; the quantiles (5%..95%) of the best cosine and of the top-10 cosines, per
set, are matched by least squares. Prints (a, b) and how well the fitted quantiles agree; ModelSpec takes the
printed pair. Results: bench/results/calibrate.json.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from bench.common import require_shared, save
from bench.eval_corpora import DEV_SETS, GROUP, TENANT, DevSet, ingest
from cairn.embedding.model import MODELS

REFERENCE = "all-MiniLM-L6-v2"  # the model whose cosines the [query] settings were first set in
QUANTILES = np.linspace(0.05, 0.95, 19)
DENSE_ONLY = {
    "steps": {"keyword_leg": False, "floors": False, "gate": False, "rerank": False, "sparse_doc_recall": False}
}


def raw_cosines(dev: DevSet, limit: int | None) -> tuple[list[float], list[float]]:
    """(best cosine, every top-10 cosine) over the dev questions, on the model's raw scale."""
    from cairn.embedding import encoder_for
    from cairn.embedding.model import cosine_scale
    from cairn.query import Principal
    from cairn.query.retriever import Retriever, connect
    from cairn.schemas.config import load_config

    config = load_config(dev.config)
    settings = config.query.model_copy(update=DENSE_ONLY)
    settings = type(settings)(**settings.model_dump())
    encoder = encoder_for(config.embedding)
    a, b = cosine_scale(encoder.identity)
    retriever = Retriever(config.milvus, settings, encoder, client=connect(config.milvus))
    best, top = [], []
    for query in dev.queries[:limit]:
        hits = retriever.retrieve(query.text, Principal(TENANT, [GROUP]), k=10, doc_tag=query.doc_tag).hits
        scores = [(h.vector_score - b) / a for h in hits]
        if scores:
            best.append(max(scores))
            top.extend(scores)
    retriever.close()
    return best, top


def fit(reference: list[np.ndarray], model: list[np.ndarray]) -> tuple[float, float, float]:
    """Least squares over matched quantiles: reference ~ a x model + b. Returns (a, b, mean absolute error)."""
    x, y = np.concatenate(model), np.concatenate(reference)
    a, b = np.polyfit(x, y, 1)
    return float(a), float(b), float(np.mean(np.abs(a * x + b - y)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="bge-small-en-v1.5", choices=[m for m in MODELS if m != REFERENCE])
    parser.add_argument("--sets", default="scifact,runbooks,cuad")
    parser.add_argument("--queries", type=int, default=0, help="first N dev questions of each set (all: 0)")
    parser.add_argument("--work", default="/tmp/cairn-eval")
    args = parser.parse_args()
    require_shared()
    reference, model, per_set = [], [], {}
    for name in args.sets.split(","):
        quantiles = {}
        for label, model_name in (("reference", REFERENCE), ("model", args.model)):
            dev = DEV_SETS[name](Path(args.work) / model_name, "auto", model_name)
            ingest(dev)
            best, top = raw_cosines(dev, args.queries or None)
            quantiles[label] = np.concatenate([np.quantile(best, QUANTILES), np.quantile(top, QUANTILES)])
        reference.append(quantiles["reference"])
        model.append(quantiles["model"])
        per_set[name] = {k: [round(float(v), 4) for v in q] for k, q in quantiles.items()}
    a, b, error = fit(reference, model)
    print(f"{args.model}: cosine_scale = ({a:.3f}, {b:.3f})  mean |error| over the matched quantiles {error:.4f}")
    save(
        "calibrate",
        {
            "model": args.model,
            "reference": REFERENCE,
            "cosine_scale": [round(a, 4), round(b, 4)],
            "mean_abs_error": round(error, 4),
            "quantiles": [round(float(q), 2) for q in QUANTILES],
            "sets": per_set,
        },
    )


if __name__ == "__main__":
    main()
