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

from bench.common import DEFAULT_MODEL, REPO, RESULTS, percentile, require_shared, save
from bench.eval_corpora import DEV_SETS, GROUP, HALVES, TENANT, DevSet, half, ingest
from bench.eval_memo import MemoEncoder, memo_reader, memo_reranker
from bench.eval_ranks import compare, first_relevant
from cairn.embedding.model import BACKENDS, MODELS
from cairn.schemas.config import QueryConfig

_DEFAULTS = QueryConfig()
# the reranker on every question, blended 0.5 with the fusion (#53: the one stage measured to help on unseen
# questions); the variants below differ in how many candidates it reads and how much of each
_EVERY = {
    "steps": {"rerank": True},
    "rerank_band": (0.0, 2.0),
    "rerank_weight": 0.5,
    "rerank_model": "ms-marco-MiniLM-L-12-v2",
}
# the sweep the reranker's defaults were chosen by, on the tuning half of SciFact dev only (`--variants tuning
# --half tune`, #53); the table shows the candidates it kept, on every question of the three sets
TUNING: dict[str, dict] = {
    "rerank_every_top5_64": {**_EVERY, "rerank_top": 5, "rerank_tokens": 64},
    "rerank_every_top10_64": {**_EVERY, "rerank_top": 10, "rerank_tokens": 64},
    "rerank_every_top5_128": {**_EVERY, "rerank_top": 5, "rerank_tokens": 128},
    "rerank_every_top10_128": {**_EVERY, "rerank_top": 10, "rerank_tokens": 128},
    "rerank_every_top20_512": {**_EVERY, "rerank_top": 20, "rerank_tokens": 512},
}
# name -> QueryConfig overrides
VARIANTS: dict[str, dict] = {
    "full": {},
    "no_gate": {"steps": {"gate": False}},
    "no_floors": {"steps": {"floors": False}},
    # the reranker (rule 11): each variant spelled out whole, so that a change of default moves no row
    "no_rerank": {"steps": {"rerank": False}},
    "rerank_every_top5_64": {**_EVERY, "rerank_top": 5, "rerank_tokens": 64},
    "rerank_every_top10_64": {**_EVERY, "rerank_top": 10, "rerank_tokens": 64},
    "rerank_every_top5_128": {**_EVERY, "rerank_top": 5, "rerank_tokens": 128},
    "no_sparse_doc_recall": {"steps": {"sparse_doc_recall": False}},
    "answer_floors": {"floor_scope": "answer"},
    "no_dominance": {"steps": {"dominance": False}},
    "dominance_orders": {"dominance_gate": False},
    "no_expansion": {"steps": {"expansion": False}},
    "no_diversity": {"steps": {"diversity": False}},
    "sparse_doc_calibrated": {"sparse_doc_max_distance": 0.13},
    "with_abstract_leg": {"steps": {"abstract_leg": True}},
    "rrf_fusion": {"fusion": "rrf"},
    "unscoped_weights": {
        "vector_weight_scoped": _DEFAULTS.vector_weight,
        "keyword_weight_scoped": _DEFAULTS.keyword_weight,
    },
    "spec_fusion": {
        "vector_weight": 0.65,
        "keyword_weight": 0.35,
        "vector_weight_scoped": 0.65,
        "keyword_weight_scoped": 0.35,
        "combined_floor": 0.45,
        "combined_floor_scoped": 0.45,
    },
    "spec_gate": {"gate_min_terms_scoped": _DEFAULTS.gate_min_terms, "gate_symptoms": False},
    "dense_only": {"steps": {"keyword_leg": False, "floors": False}},
    "bm25_only": {"steps": {"dense_leg": False, "floors": False}},
}

LABELS = {
    "full": "**the default pipeline**",
    "no_gate": "without the query gate",
    "no_floors": "without the relevance floors",
    "no_rerank": "without the reranker",
    "rerank_every_top5_64": "reranking every question: its top 5, 64 word pieces each (cross-encoder, blended 0.5)",
    "rerank_every_top10_64": "reranking every question: its top 10, 64 word pieces each",
    "rerank_every_top5_128": "reranking every question: its top 5, 128 word pieces each",
    "rerank_every_top10_128": "reranking every question: its top 10, 128 word pieces each",
    "rerank_every_top20_512": "reranking every question: its top 20, 512 word pieces each (0.6's variant)",
    "no_sparse_doc_recall": "without the short-document recall guarantee",
    "answer_floors": "floors do not guard citations: every candidate ranked once one passes (0.5)",
    "no_dominance": "without the dominance step (no gate, no main document first)",
    "dominance_orders": "dominance orders instead of gating: main document first, others kept (0.5)",
    "no_expansion": "without neighbour expansion",
    "no_diversity": "without diversity (2 sections a document)",
    "sparse_doc_calibrated": "short-document ceiling 0.13 raw (0.20 on the calibrated scale, as 0.5 read it)",
    "with_abstract_leg": "with the abstract-vector leg (off by default)",
    "rrf_fusion": "RRF fusion instead of the weighted sum (Cairn 0.3)",
    "unscoped_weights": (
        f"scoped questions weighted as the others ({_DEFAULTS.vector_weight} / {_DEFAULTS.keyword_weight}, "
        f"not {_DEFAULTS.vector_weight_scoped} / {_DEFAULTS.keyword_weight_scoped})"
    ),
    "spec_fusion": "the spec's fusion: 0.65 / 0.35 for every question, combined floor 0.45",
    "spec_gate": f"the spec's gate: {_DEFAULTS.gate_min_terms} content words or an ID, no symptom or scope relief",
    "dense_only": "dense leg only (no BM25, no floors)",
    "bm25_only": "BM25 only (no dense, no floors)",
}
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
                cells.append(f"{value:.3f}" if variant == "full" else f"{value:.3f} ({value - base:+.3f})")
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
