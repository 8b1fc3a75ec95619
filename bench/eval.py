"""Retrieval quality on the labelled dev sets, with every switchable step ablated.

    python -m bench.eval [--sets runbooks,scifact] [--scifact-queries 300] [--work /tmp/cairn-eval]

Each dev set's corpus is ingested through the real Prefect flow into a scratch Milvus Lite file (kept in
--work between runs; unchanged input embeds nothing). Then every query runs through `Retriever.retrieve` once
per variant: the full pipeline, each step off, fusion by weighted sum instead of RRF, dense-only and
BM25-only. Metrics are by document (a document ranks where its first section does): nDCG@10, recall@1/5/10,
MRR@10, hit@10 (CUAD: questions are scoped to their contract by doc_tag and a returned section counts when
it holds an answer span, so recall@k there is "an answer in the top k sections"), plus latency and the pipeline's own counters. Results: bench/results/eval.json.
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from bench.common import require_shared, save
from cairn.embedding.model import BACKENDS
from bench.eval_corpora import DEV_SETS, GROUP, TENANT, DevSet, ingest

# name -> QueryConfig overrides
VARIANTS: dict[str, dict] = {
    "full": {},
    "no_gate": {"steps": {"gate": False}},
    "no_floors": {"steps": {"floors": False}},
    "no_second_pass": {"steps": {"second_pass": False}},
    "no_sparse_doc_recall": {"steps": {"sparse_doc_recall": False}},
    "no_dominance": {"steps": {"dominance": False}},
    "no_diversity": {"steps": {"diversity": False}},
    "with_abstract_leg": {"steps": {"abstract_leg": True}},
    "weighted_fusion": {"fusion": "weighted"},
    "dense_only": {"steps": {"keyword_leg": False, "floors": False}},
    "bm25_only": {"steps": {"dense_leg": False, "floors": False}},
}


class MemoEncoder:
    """The same query text is embedded once across variants (the model is the slow part on 2 cores)."""

    def __init__(self, encoder) -> None:
        self.encoder, self.memo = encoder, {}
        self.identity = getattr(encoder, "identity", "")

    def encode(self, texts, **kwargs):
        import numpy as np

        missing = [t for t in texts if t not in self.memo]
        if missing:
            self.memo.update(zip(missing, self.encoder.encode(missing, **kwargs)))
        return np.stack([self.memo[t] for t in texts])


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def answer_ranking(hits, answers: list[str]) -> tuple[list[str], dict[str, int]]:
    """Sections in rank order, those holding an answer span collapsed into one relevant item "answer"."""
    wanted = [_norm(a) for a in answers]
    ranked = ["answer" if any(a in _norm(h.text) for a in wanted) else h.chunk_id for h in hits]
    return list(dict.fromkeys(ranked)), {"answer": 1}


def evaluate(dev: DevSet, variant: dict, encoder, k: int, limit: int | None) -> dict:
    from cairn.query import Principal
    from cairn.query.eval import documents_in_order, summarise
    from cairn.query.retriever import Retriever, connect
    from cairn.schemas.config import load_config

    config = load_config(dev.config)
    settings = config.query.model_copy(update=variant)
    settings = type(settings)(**settings.model_dump())  # re-validated
    retriever = Retriever(config.milvus, settings, encoder, client=connect(config.milvus))
    principal = Principal(TENANT, [GROUP])
    runs, latencies, statuses, injections, second, primary = [], [], {}, 0, 0, []
    for query in dev.queries[:limit]:
        started = time.perf_counter()
        result = retriever.retrieve(query.text, principal, k=k, doc_tag=query.doc_tag)
        latencies.append((time.perf_counter() - started) * 1000)
        if query.answers:  # judged by answer span: every section holding one counts as "the answer"
            runs.append(answer_ranking(result.hits, query.answers))
        else:
            runs.append((documents_in_order([h.document_id for h in result.hits]), query.relevant))
        statuses[result.status] = statuses.get(result.status, 0) + 1
        injections += result.diagnostics.get("injections", 0)
        second += bool(result.diagnostics.get("second_pass"))
        if result.diagnostics.get("primary_doc_fraction") is not None:
            primary.append(result.diagnostics["primary_doc_fraction"])
        for hit in result.hits:
            if hit.recall_injected:
                injected_ok = query.relevant.get(hit.document_id, 0) > 0
                statuses["injected_relevant" if injected_ok else "injected_irrelevant"] = statuses.get(
                    "injected_relevant" if injected_ok else "injected_irrelevant", 0) + 1
    retriever.close()
    latencies.sort()
    return {
        "queries": len(runs),
        "metrics": summarise(runs, k=10),
        "statuses": statuses,
        "injections": injections,
        "second_passes": second,
        "gated_queries": len(primary),
        "mean_primary_doc_fraction": round(statistics.mean(primary), 4) if primary else None,
        "latency_ms_p50": round(latencies[len(latencies) // 2], 1) if latencies else None,
        "latency_ms_p95": round(latencies[int(len(latencies) * 0.95)], 1) if latencies else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", default="runbooks,scifact,cuad")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--scifact-queries", type=int, default=300, help="first N dev queries (all: 0)")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--work", default="/tmp/cairn-eval")
    parser.add_argument("--out", default="eval")
    parser.add_argument("--backend", default="torch", choices=BACKENDS,
                        help="embedding backend (its indexes live in --work/<backend> unless it is torch)")
    args = parser.parse_args()
    require_shared()
    from cairn.embedding import encoder_for
    from cairn.schemas.config import load_config

    work = Path(args.work) if args.backend == "torch" else Path(args.work) / args.backend
    results: dict = {"k": args.k, "backend": args.backend, "sets": {}}
    encoder = None
    for name in args.sets.split(","):
        dev = DEV_SETS[name](work, args.backend)
        encoder = encoder or MemoEncoder(encoder_for(load_config(dev.config).embedding))
        report = ingest(dev)
        limit = (args.scifact_queries or None) if name == "scifact" else None
        entry = {"documents": report["documents"], "queries_available": len(dev.queries), "variants": {}}
        for variant in args.variants.split(","):
            entry["variants"][variant] = evaluate(dev, VARIANTS[variant], encoder, args.k, limit)
            m = entry["variants"][variant]["metrics"]
            print(f"{name:9} {variant:22} ndcg@10 {m['ndcg@10']:.3f} r@1 {m['recall@1']:.3f} r@5 {m['recall@5']:.3f} "
                  f"r@10 {m['recall@10']:.3f} mrr {m['mrr']:.3f} p50 {entry['variants'][variant]['latency_ms_p50']} ms", flush=True)
        results["sets"][name] = entry
    save(args.out, results)


if __name__ == "__main__":
    main()
