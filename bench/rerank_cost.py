"""What the reranker costs a question: retrieve() with and without it, on the same questions, in turn.

    python -m bench.rerank_cost [--set scifact] [--work /tmp/cairn-eval] [--queries 100] [--variants no_rerank,full]

A dev set's questions of the held-out half (bench.eval's `half`; its index in --work, built by bench.eval)
through `Retriever.retrieve` as a service runs it: a fresh reader (every search reaches Milvus Lite), the real
reranker with an empty cache for each variant (a variant reading a subset of another's pairs is not answered
from the other's), k = 10. Each question is asked under every variant in turn before the next question, so a
change in the machine's load falls on every variant alike. Per variant: retrieve() p50 / p95, the rerank step's
own p50 / p95 (`rerank_ms`) and its share of the retrieve, the median over questions of (retrieve with it /
retrieve without it), and the CPU time the process spent beyond the baseline's on the same question (every
thread; on 2 idle cores the wall time of two workers is about half of it); the load average before and after
(the machine is shared: read the ratio and the CPU time, not the wall figures, when it is loaded). Results:
bench/results/rerank_cost.json.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from bench.common import DEFAULT_MODEL, percentile, require_shared, save
from bench.eval_corpora import DEV_SETS, GROUP, TENANT, half, ingest
from bench.eval_variants import TUNING, VARIANTS


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--set", default="scifact", choices=list(DEV_SETS))
    parser.add_argument("--work", default="/tmp/cairn-eval")
    parser.add_argument("--queries", type=int, default=100, help="held-out dev questions asked")
    parser.add_argument("--variants", default="no_rerank,full")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--scifact-subset", type=int, default=0, help="bench.eval's SciFact subset (its index)")
    args = parser.parse_args()
    require_shared()
    from cairn.embedding import encoder_for
    from cairn.embedding.reranker import load_reranker
    from cairn.query import Principal
    from cairn.query.retriever import Retriever, connect
    from cairn.schemas.config import load_config

    backend = "onnx-int8"
    work = Path(args.work) / DEFAULT_MODEL
    if args.set == "scifact":
        dev = DEV_SETS["scifact"](work, backend, DEFAULT_MODEL, subset=args.scifact_subset)
    else:
        dev = DEV_SETS[args.set](work, backend, DEFAULT_MODEL)
    ingest(dev)
    config = load_config(dev.config)
    encoder = encoder_for(config.embedding)
    reader = connect(config.milvus)
    names = args.variants.split(",")
    retrievers = {}
    for name in names:
        settings = config.query.model_copy(update={**VARIANTS, **TUNING}[name])
        settings = type(settings)(**settings.model_dump())
        # a model of its own (its own cache) for each variant
        model = load_reranker.__wrapped__(settings.rerank_model) if settings.enabled("rerank") else None
        retrievers[name] = Retriever(config.milvus, settings, encoder, client=reader, reranker=model)
    principal = Principal(TENANT, [GROUP])
    questions = [q for q in dev.queries if half(q.id) == "held_out"][: args.queries]
    for retriever in retrievers.values():  # warm: the models' sessions, the encoder, Milvus's caches
        retriever.retrieve(questions[0].text, principal, k=args.k, doc_tag=questions[0].doc_tag)
    load_before = os.getloadavg()
    wall: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}
    rerank: dict[str, list[float]] = {n: [] for n in names}
    for question in questions[1:]:
        for name in names:
            started, used = time.perf_counter(), time.process_time()
            result = retrievers[name].retrieve(question.text, principal, k=args.k, doc_tag=question.doc_tag)
            wall[name].append((time.perf_counter() - started) * 1000)
            cpu[name].append((time.process_time() - used) * 1000)
            rerank[name].append(float(result.diagnostics.get("rerank_ms") or 0.0))
    load_after = os.getloadavg()
    reader.close()
    base = names[0]
    report: dict = {
        "set": args.set,
        "questions": len(questions) - 1,
        "k": args.k,
        "cpus": os.cpu_count(),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in load_after],
        "baseline": base,
        "variants": {},
    }
    for name in names:
        ratios = [w / b for w, b in zip(wall[name], wall[base]) if b > 0]
        report["variants"][name] = {
            "retrieve_ms_p50": round(statistics.median(wall[name]), 1),
            "retrieve_ms_p95": round(percentile(wall[name], 0.95), 1),
            "rerank_ms_p50": round(statistics.median(rerank[name]), 1),
            "rerank_ms_p95": round(percentile(rerank[name], 0.95), 1),
            "rerank_share_p50": round(statistics.median(r / w for r, w in zip(rerank[name], wall[name])), 3),
            # this process's CPU time (every thread; the Lite server's is not in it) over the baseline's, a
            # question: what the rerank costs the cores whatever else runs; on 2 idle cores its wall is about half
            "extra_cpu_ms_p50": round(statistics.median(c - b for c, b in zip(cpu[name], cpu[base])), 1),
            "extra_cpu_ms_p95": round(percentile([c - b for c, b in zip(cpu[name], cpu[base])], 0.95), 1),
            "ratio_to_baseline_p50": round(statistics.median(ratios), 3),
        }
        v = report["variants"][name]
        print(
            f"{name:24} retrieve p50 / p95 {v['retrieve_ms_p50']} / {v['retrieve_ms_p95']} ms, rerank p50 / p95 "
            f"{v['rerank_ms_p50']} / {v['rerank_ms_p95']} ms (share {v['rerank_share_p50']}), CPU over the baseline "
            f"p50 / p95 {v['extra_cpu_ms_p50']} / {v['extra_cpu_ms_p95']} ms, "
            f"x{v['ratio_to_baseline_p50']} of {base}",
            flush=True,
        )
    print(f"load average before {report['loadavg_before']}, after {report['loadavg_after']}")
    save(f"rerank_cost_{args.set}", report)


if __name__ == "__main__":
    main()
