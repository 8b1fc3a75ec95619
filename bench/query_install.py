"""The query install's encoder against the full install's, on SciFact dev: same index, same pipeline.

    python -m bench.query_install [--work /tmp/cairn-eval] [--queries 0]

The SciFact dev corpus is indexed once with the full install's encoder (kept in --work, as bench.eval
keeps it); its query model is exported (`cairn export-query-model`), and every dev query runs through the
default pipeline twice: embedded by the torch model, and by the exported ONNX model through onnxruntime and
`tokenizers` (what a `cairn[query]` service runs). Prints nDCG@10 and recall@10 of each, their difference
(the goal: within 0.005), the largest distance between the two query vectors, and the export's size.
Results: bench/results/query_install.json.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from bench.common import require_shared, save
from bench.eval import evaluate
from bench.eval_corpora import ingest, scifact
from bench.eval_variants import VARIANTS


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", default="/tmp/cairn-eval")
    parser.add_argument("--queries", type=int, default=0, help="first N dev queries (all: 0)")
    args = parser.parse_args()
    require_shared()
    from cairn.embedding import encoder_for
    from cairn.embedding.query_model import QueryModel, export_query_model
    from cairn.schemas.config import load_config

    dev = scifact(Path(args.work))
    ingest(dev)
    torch_encoder = encoder_for(load_config(dev.config).embedding)
    folder = export_query_model(torch_encoder, Path(args.work) / "query-model")
    onnx_encoder = QueryModel(folder)
    limit = args.queries or None
    texts = [q.text for q in dev.queries[:limit]]
    gap = float(np.max(1.0 - (torch_encoder.encode(texts) * onnx_encoder.encode(texts)).sum(axis=1)))
    full = evaluate(dev, VARIANTS["full"], torch_encoder, 10, limit)["metrics"]
    query = evaluate(dev, VARIANTS["full"], onnx_encoder, 10, limit)["metrics"]
    result = {
        "queries": len(texts),
        "full_install": {"ndcg@10": full["ndcg@10"], "recall@10": full["recall@10"]},
        "query_install": {"ndcg@10": query["ndcg@10"], "recall@10": query["recall@10"]},
        "ndcg@10_difference": round(query["ndcg@10"] - full["ndcg@10"], 4),
        "max_cosine_distance_between_query_vectors": gap,
        "export_mb": round(sum(p.stat().st_size for p in folder.iterdir()) / 2**20, 1),
    }
    save("query_install", result)
    print(
        f"SciFact dev, {len(texts)} queries: nDCG@10 full install {full['ndcg@10']:.4f}, query install "
        f"{query['ndcg@10']:.4f} (difference {result['ndcg@10_difference']:+.4f}); largest query-vector cosine "
        f"distance {gap:.2e}; export {result['export_mb']} MB"
    )


if __name__ == "__main__":
    main()
