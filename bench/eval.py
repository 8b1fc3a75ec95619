"""Retrieval quality on the labelled dev sets, with every switchable step ablated.

    python -m bench.eval [--sets runbooks,scifact] [--scifact-queries 300] [--work /tmp/cairn-eval]
    python -m bench.eval --sets scifact,runbooks,cuad --scifact-queries 0 --table  # docs/benchmarks.md's table

Each dev set's corpus is ingested through the real Prefect flow into a scratch Milvus Lite file (kept in
--work between runs; unchanged input embeds nothing). Then every query runs through `Retriever.retrieve` once
per variant (each distinct Milvus read answered once per set, `memo_reader`): the full pipeline, each step
off, fusion by weighted sum instead of RRF, dense-only and BM25-only. Metrics are by document (a document
ranks where its first section does): nDCG@10, recall@1/5/10, MRR@10, hit@10 (CUAD: questions are scoped to
their contract by doc_tag and a returned section counts when it holds an answer span, so recall@k there is
"an answer in the top k sections"), plus latency and the pipeline's own counters. Results:
bench/results/eval.json.
Each set's results are saved as soon as it is measured, over what earlier runs of the same model, backend and
k left in the file: a run that stops on its third set keeps its first two, and the sets may be measured in
separate runs. With --table (--readme, its old name, still works) the ablation table in docs/benchmarks.md,
between its two markers, is rewritten from the saved results once they hold every set, every variant and all
SciFact dev queries (each set's date is in the table): each default is justified by a number there.
Each run keeps every question's rank (`ranks`): `--compare BEFORE AFTER --at 5` lists the questions a change moved
out of and into the top 5 of two saved results (bench/eval_ranks.py).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from bench.common import DEFAULT_MODEL, RESULTS, percentile, require_shared, save
from bench.eval_corpora import DEV_SETS, GROUP, HALVES, TENANT, DevSet, half, ingest
from bench.eval_memo import MemoEncoder, memo_reader, memo_reranker
from bench.eval_ranks import compare, first_relevant
from bench.eval_table import ablation_table, incomplete, merge_sets, write_table
from bench.eval_variants import TUNING, VARIANTS
from cairn.embedding.model import BACKENDS, MODELS


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def answer_ranking(hits, answers: list[str]) -> tuple[list[str], dict[str, int]]:
    """Sections in rank order, those holding an answer span collapsed into one relevant item "answer"."""
    wanted = [_norm(a) for a in answers]
    ranked = ["answer" if any(a in _norm(h.text) for a in wanted) else h.chunk_id for h in hits]
    return list(dict.fromkeys(ranked)), {"answer": 1}


def evaluate(dev: DevSet, variant: dict, encoder, k: int, limit: int | None, reader=None) -> dict:
    """Every query of the set through `Retriever.retrieve` under the variant's settings; `reader`: a collection
    reader of one's own (kept open, e.g. `memo_reader`), else one opened and closed here. Each half's metrics
    (`half`) are given apart too."""
    from cairn.query import Principal
    from cairn.query.eval import documents_in_order, summarise
    from cairn.query.retriever import Retriever, connect
    from cairn.schemas.config import load_config

    config = load_config(dev.config)
    settings = config.query.model_copy(update=variant)
    settings = type(settings)(**settings.model_dump())  # re-validated
    reranker = memo_reranker(settings.rerank_model) if settings.enabled("rerank") else None
    retriever = Retriever(config.milvus, settings, encoder, client=reader or connect(config.milvus), reranker=reranker)
    principal = Principal(TENANT, [GROUP])
    runs, latencies, statuses, injections, primary, rerank_ms, gated = [], [], {}, 0, [], [], 0
    halves: list[str] = []
    ranks: dict[str, int | None] = {}  # question id -> its first relevant item's rank (`moved`, `compare`)
    for query in dev.queries[:limit]:
        halves.append(half(query.id))
        started = time.perf_counter()
        result = retriever.retrieve(query.text, principal, k=k, doc_tag=query.doc_tag)
        latencies.append((time.perf_counter() - started) * 1000)
        if query.answers:  # judged by answer span: every section holding one counts as "the answer"
            runs.append(answer_ranking(result.hits, query.answers))
        else:
            runs.append((documents_in_order([h.document_id for h in result.hits]), query.relevant))
        ranks[query.id] = first_relevant(*runs[-1])
        statuses[result.status] = statuses.get(result.status, 0) + 1
        if result.empty_reason:  # why it is empty: below_floors, too_vague, ... (#39)
            statuses[result.empty_reason] = statuses.get(result.empty_reason, 0) + 1
        injections += result.diagnostics.get("injections", 0)
        if result.diagnostics.get("rerank_used") and reranker is not None:
            rerank_ms.append(reranker.last_ms)
        if (result.diagnostics.get("dominance") or {}).get("primary"):  # the answer was gated to one document
            gated += 1
        if result.diagnostics.get("primary_doc_fraction") is not None:  # before the gate, every answer (#53)
            primary.append(result.diagnostics["primary_doc_fraction"])
        for hit in result.hits:
            if hit.recall_injected:
                injected_ok = query.relevant.get(hit.document_id, 0) > 0
                statuses["injected_relevant" if injected_ok else "injected_irrelevant"] = (
                    statuses.get("injected_relevant" if injected_ok else "injected_irrelevant", 0) + 1
                )
    if reader is None:
        retriever.close()
    latencies.sort()
    return {
        "queries": len(runs),
        "metrics": summarise(runs, k=10),
        "halves": {
            part: summarise([r for r, h in zip(runs, halves) if h == part], k=10) | {"queries": halves.count(part)}
            for part in HALVES
            if part in halves
        },
        "statuses": statuses,
        "injections": injections,
        "reranked": len(rerank_ms),
        "rerank_ms_p50": round(percentile(rerank_ms, 0.5), 1) if rerank_ms else None,
        "rerank_ms_p95": round(percentile(rerank_ms, 0.95), 1) if rerank_ms else None,
        "gated_queries": gated,
        "mean_primary_doc_fraction": round(statistics.mean(primary), 4) if primary else None,
        "ranks": ranks,
        "latency_ms_p50": round(latencies[len(latencies) // 2], 1) if latencies else None,
        "latency_ms_p95": round(latencies[int(len(latencies) * 0.95)], 1) if latencies else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", default="runbooks,scifact,cuad")
    parser.add_argument(
        "--variants", default=",".join(VARIANTS), help="names, comma-separated; `tuning`: the reranker's sweep (TUNING)"
    )
    parser.add_argument(
        "--scifact-subset",
        type=int,
        default=0,
        help="N > 0: SciFact as a smaller set, stated as such in the table (bench.eval_corpora.scifact)",
    )
    parser.add_argument("--half", choices=HALVES, help="ask one half of each set's questions only (`half`)")
    parser.add_argument("--scifact-queries", type=int, default=300, help="first N dev queries (all: 0)")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--work", default="/tmp/cairn-eval")
    parser.add_argument("--out", default="eval")
    parser.add_argument(
        "--model",
        default=DEFAULT_MODEL,
        choices=list(MODELS),
        help="embedding model (its indexes live in --work/<model>)",
    )
    parser.add_argument(
        "--backend",
        default="auto",
        choices=BACKENDS,
        help="embedding backend (its indexes live in --work/<backend> unless it is the model's first)",
    )
    parser.add_argument(
        "--table",
        "--readme",  # its name while the table was in README.md
        dest="table",
        action="store_true",
        help="rewrite docs/benchmarks.md's ablation table from the saved results (they must hold every set, "
        "every variant, all SciFact queries)",
    )
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="two saved results: no run")
    parser.add_argument("--at", type=int, default=5, help="--compare: the questions out of / into the top AT")
    args = parser.parse_args()
    if args.compare:
        print(compare(*(json.loads(Path(path).read_text()) for path in args.compare), args.at))
        return
    require_shared()
    from cairn.embedding import encoder_for
    from cairn.schemas.config import load_config

    backend = MODELS[args.model].backends[0] if args.backend == "auto" else args.backend  # recorded resolved
    work = Path(args.work) / args.model
    if backend != MODELS[args.model].backends[0]:
        work = work / backend
    results: dict = {"k": args.k, "model": args.model, "backend": backend, "sets": {}}
    saved = RESULTS / f"{args.out}.json"
    previous = json.loads(saved.read_text()) if saved.exists() else None
    encoder = None
    for name in args.sets.split(","):
        dev = (
            DEV_SETS[name](work, backend, args.model, subset=args.scifact_subset)
            if name == "scifact" and args.scifact_subset
            else DEV_SETS[name](work, backend, args.model)
        )
        encoder = encoder or MemoEncoder(encoder_for(load_config(dev.config).embedding))
        report = ingest(dev)
        limit = (args.scifact_queries or None) if name == "scifact" else None
        entry = {"documents": report["documents"], "queries_available": len(dev.queries), "variants": {}}
        if args.half:  # one half only (tuning on it): the table's checks see it as a partial run
            dev.queries = [q for q in dev.queries if half(q.id) == args.half]
        if name == "scifact" and args.scifact_subset:
            entry["subset"] = args.scifact_subset
        reader = memo_reader(load_config(dev.config))
        names = list(TUNING) if args.variants == "tuning" else args.variants.split(",")
        for variant in names:
            settings = {**VARIANTS, **TUNING}[variant]
            entry["variants"][variant] = evaluate(dev, settings, encoder, args.k, limit, reader)
            run = entry["variants"][variant]
            m = run["metrics"]
            reranked = (
                f" reranked {run['reranked']} (p50 / p95 {run['rerank_ms_p50']} / {run['rerank_ms_p95']} ms)"
                if run["reranked"]
                else ""
            )
            parts = " ".join(f"{h} {v['ndcg@10']:.3f}" for h, v in run["halves"].items())
            print(
                f"{name:9} {variant:22} ndcg@10 {m['ndcg@10']:.3f} r@1 {m['recall@1']:.3f} r@5 {m['recall@5']:.3f} "
                f"r@10 {m['recall@10']:.3f} mrr {m['mrr']:.3f} p50 {run['latency_ms_p50']} ms{reranked} ({parts})",
                flush=True,
            )
        reader.close()
        entry["measured"] = time.strftime("%Y-%m-%d", time.gmtime())
        results["sets"][name] = entry
        save(args.out, merge_sets(previous, results), echo=False)  # kept if a later set fails
    merged = merge_sets(previous, results)
    save(args.out, merged)
    print(ablation_table(merged))
    if args.table:
        missing = incomplete(merged)
        if missing:
            raise SystemExit(f"the ablation table not rewritten; the saved results lack: {'; '.join(missing)}")
        write_table(merged)


if __name__ == "__main__":
    main()
