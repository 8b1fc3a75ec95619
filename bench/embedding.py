"""Embedding backends: the int8 ONNX export against the torch model, on the same texts, in one run, and
bge-small-en-v1.5 (int8 ONNX, the default model since 0.5) beside them.

    python -m bench.embedding [--runs 3] [--texts 1000] [--sweep 4,8,16,32,64] [--scifact-queries 0] [--no-scifact]

Texts: the first `--texts` model inputs (child chunks and abstracts, as ingest builds them) of the shared
openshift runbooks. Each run encodes them with torch, then with onnx-int8, alternately, so both see the same
machine load; speed-up = median over runs of torch seconds / onnx seconds. Quality: cosine of each int8
vector to its torch (fp32) vector (mean, p1, min), and how often a text's nearest torch neighbour among the
sample is itself. bge-small-en-v1.5 is timed in the same rotation (its texts/s and its time / MiniLM torch's).
Batch sizes: each backend encodes the first 300 of the texts at each size of --sweep, alternating, per run (the
default [embedding] batch_size comes from this). Results: bench/results/embedding.json.

Then (unless --no-scifact, ~35 min on 2 cores) SciFact nDCG@10 of the full retrieval pipeline with an index
built by each backend (bench.eval's dev set and harness; the onnx index lives in --work/onnx-int8), into
bench/results/embedding_scifact.json, which a --no-scifact run leaves as it was.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import median, require_shared, save, scratch_config


def sample_texts(shared: Path, limit: int) -> list[str]:
    from bench.runbooks import texts_embedded

    with tempfile.TemporaryDirectory() as tmp:
        config = scratch_config(
            Path(tmp),
            [
                {
                    "name": "openshift",
                    "type": "wiki",
                    "tenant": "bench",
                    "acl": ["all"],
                    "path": str(shared / "corpora/wiki/openshift-runbooks"),
                }
            ],
        )
        return texts_embedded(config)[:limit]


def scifact_ndcg(work: Path, backend: str, queries: int) -> dict:
    from bench.eval import MemoEncoder, evaluate
    from bench.eval_corpora import ingest, scifact
    from bench.eval_variants import VARIANTS
    from cairn.embedding import encoder_for
    from cairn.schemas.config import load_config

    model = "all-MiniLM-L6-v2"
    dev = scifact(work / model if backend == "torch" else work / model / backend, backend, model)
    started = time.perf_counter()
    report = ingest(dev)
    encoder = MemoEncoder(encoder_for(load_config(dev.config).embedding))
    result = evaluate(dev, VARIANTS["full"], encoder, 10, queries or None)
    return {
        "ndcg@10": result["metrics"]["ndcg@10"],
        "recall@10": result["metrics"]["recall@10"],
        "queries": result["queries"],
        "index_documents": report.get("documents"),
        "ingest_seconds_this_run": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--texts", type=int, default=1000)
    parser.add_argument("--sweep", default="4,8,16,32,64", help="batch sizes to time each backend at")
    parser.add_argument("--scifact-queries", type=int, default=0, help="first N SciFact dev queries (all: 0)")
    parser.add_argument("--no-scifact", action="store_true")
    parser.add_argument("--work", default="/tmp/cairn-eval")
    args = parser.parse_args()
    shared = require_shared()
    from cairn.embedding import load_encoder
    from cairn.embedding.model import BATCH_SIZE

    texts = sample_texts(shared, args.texts)
    exact_model, int8_model = load_encoder("all-MiniLM-L6-v2", "torch"), load_encoder("all-MiniLM-L6-v2", "onnx-int8")
    bge = load_encoder("bge-small-en-v1.5")
    bge.encode(["warm up"])
    started = time.perf_counter()
    int8_model.encode(["warm up: exports the model on first use"])
    first_load = time.perf_counter() - started
    exact_model.encode(["warm up"])
    runs = []
    backends = (("torch", exact_model), ("onnx-int8", int8_model), ("bge-small-en-v1.5", bge))
    sizes = [int(size) for size in args.sweep.split(",") if size]
    sweep: dict[str, dict[int, list[float]]] = {name: {} for name, _ in backends}
    for _ in range(args.runs):
        timings = {}
        for name, model in backends:
            started = time.perf_counter()
            vectors = model.encode(texts, batch_size=BATCH_SIZE)
            timings[name] = (time.perf_counter() - started, vectors)
        runs.append(
            {
                "torch_seconds": round(timings["torch"][0], 2),
                "onnx_int8_seconds": round(timings["onnx-int8"][0], 2),
                "speedup": round(timings["torch"][0] / timings["onnx-int8"][0], 3),
                "bge_seconds": round(timings["bge-small-en-v1.5"][0], 2),
                "bge_time_over_torch": round(timings["bge-small-en-v1.5"][0] / timings["torch"][0], 3),
            }
        )
        for size in sizes:
            for name, model in backends:
                started = time.perf_counter()
                model.encode(texts[:300], batch_size=size)
                sweep[name].setdefault(size, []).append(time.perf_counter() - started)
    exact, int8 = timings["torch"][1], timings["onnx-int8"][1]
    cosines = (exact * int8).sum(axis=1)
    own_neighbour = float(np.mean((int8 @ exact.T).argmax(axis=1) == np.arange(len(texts))))
    tokens = [len(t.split()) for t in texts]
    results = {
        "texts": len(texts),
        "texts_from": "openshift-runbooks model inputs (children and abstracts)",
        "median_words_per_text": median(tokens),
        "onnx_first_load_seconds": round(first_load, 2),
        "runs": runs,
        "batch_size": BATCH_SIZE,
        "median_speedup": median([r["speedup"] for r in runs]),
        "torch_texts_per_s": round(len(texts) / median([r["torch_seconds"] for r in runs]), 1),
        "onnx_int8_texts_per_s": round(len(texts) / median([r["onnx_int8_seconds"] for r in runs]), 1),
        "bge_texts_per_s": round(len(texts) / median([r["bge_seconds"] for r in runs]), 1),
        "bge_median_time_over_torch": median([r["bge_time_over_torch"] for r in runs]),
        "cosine_to_fp32": {
            "mean": round(float(cosines.mean()), 4),
            "p1": round(float(np.percentile(cosines, 1)), 4),
            "min": round(float(cosines.min()), 4),
        },
        "nearest_torch_neighbour_is_itself": round(own_neighbour, 4),
        "batch_size_sweep": {  # texts per second on the first 300 texts, median over runs
            name: {str(size): round(min(300, len(texts)) / median(seconds), 1) for size, seconds in by_size.items()}
            for name, by_size in sweep.items()
        },
    }
    print(
        f"bge-small-en-v1.5 {results['bge_texts_per_s']} texts/s, "
        f"{results['bge_median_time_over_torch']}x MiniLM torch's time; "
        f"MiniLM onnx-int8 speed-up {results['median_speedup']}x at batch size {BATCH_SIZE}, cosine mean "
        f"{results['cosine_to_fp32']['mean']}; texts/s by batch size: {results['batch_size_sweep']}",
        flush=True,
    )
    save("embedding", results)
    if not args.no_scifact:
        save(
            "embedding_scifact",
            {
                backend: scifact_ndcg(Path(args.work), backend, args.scifact_queries)
                for backend in ("torch", "onnx-int8")
            },
        )


if __name__ == "__main__":
    main()
