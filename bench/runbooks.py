"""Ingest the shared runbook corpora; chunk SLA, ingest vs raw model throughput, recall@5 by document.

    python -m bench.runbooks [--runs 3] [--corpus NAME] [--store lite|server --uri http://host:19530]

Per corpus and run, in one process: (1) a clean ingest through the real Prefect flow into a scratch
Milvus Lite file (or a collection of its own on a Milvus server: --store server), (2) the raw model
encoding exactly the texts that ingest embedded, at the pipeline's batch size, (3) the ratio of their
rates, for the whole run and for the run without its closing data-quality report (a fixed cost per run).
Then recall@5 by document on ../shared/eval/dev/runbooks (query = the alert's summary).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from bench.common import (
    RESULTS,
    BenchStore,
    add_store_arguments,
    bench_store,
    median,
    require_shared,
    save,
    scratch_config,
)

CORPORA = {
    "prometheus-operator-runbooks": "wiki/prometheus-operator-runbooks",
    "openshift-runbooks": "wiki/openshift-runbooks",
}


def texts_embedded(config_path: Path) -> list[str]:
    """Exactly the model inputs an ingest of this config produces (re-derived, not read from a cache)."""
    from cairn.chunkers import chunk_document
    from cairn.index.rows import abstract_input, child_input
    from cairn.schemas.config import load_config
    from cairn.sources import DiscoveryFailure, DocumentError, open_source

    config = load_config(config_path)
    texts: list[str] = []
    for source_config in config.sources:
        source = open_source(source_config, s3=config.s3)
        for ref in source.discover():
            if isinstance(ref, DiscoveryFailure):
                continue
            try:
                doc = source.load(ref)
            except DocumentError:
                continue
            for section in chunk_document(doc, config.chunking):
                texts.append(abstract_input(doc, section))
                texts.extend(child_input(doc, section, c.text) for c in section.chunks)
    return list(dict.fromkeys(texts))


def sla(config_path: Path) -> dict:
    from cairn.index.store import MilvusStore
    from cairn.schemas.config import load_config
    from cairn.schemas.row_links import ParentLinks

    config = load_config(config_path)
    store = MilvusStore(config.milvus, dim=384)
    store.ensure_collection()
    parents = list(store.iterate('chunk_type == "full_text"', ["document_id", "token_count", "extra"]))
    children = list(store.iterate('chunk_type == "child"', ["token_count"]))
    store.close()
    lo, hi = config.chunking.parent_min_tokens, config.chunking.parent_max_tokens
    doc_tokens: dict[str, int] = {}
    for p in parents:
        doc_tokens[p.document_id] = doc_tokens.get(p.document_id, 0) + p.token_count
    eligible = [p for p in parents if doc_tokens[p.document_id] >= lo]
    within = lambda rows: sum(lo <= r.token_count <= hi for r in rows) / max(1, len(rows))  # noqa: E731
    abstracts = [ParentLinks.from_row(p).abstract_token_count or 0 for p in parents]
    return {
        "sections": len(parents),
        "chunks": len(children),
        "sections_within_400_900": round(within(parents), 4),
        "sections_within_400_900_docs_over_400_tokens": round(within(eligible), 4),
        "documents_under_400_tokens": sum(t < lo for t in doc_tokens.values()),
        "children_within_100_200": round(sum(100 <= c.token_count <= 200 for c in children) / max(1, len(children)), 4),
        "abstracts_within_100_200": round(sum(100 <= a <= 200 for a in abstracts) / max(1, len(abstracts)), 4),
    }


def recall_at_5(config_path: Path, shared: Path, source_name: str) -> dict:
    from cairn.query import Principal, Retriever
    from cairn.schemas import SourceType
    from cairn.sources import document_id

    alerts = [
        json.loads(line) for line in (shared / "eval/dev/runbooks/prometheus-operator-runbooks.alerts.jsonl").open()
    ]
    retriever = Retriever.from_config(config_path)
    principal = Principal("bench", ["all"])
    found_sections, found_docs, latencies = 0, 0, []
    for alert in alerts:
        want = document_id(SourceType.WIKI, source_name, alert["relevant_doc"])
        text = alert.get("summary") or alert.get("description") or alert["alertname"]
        started = time.perf_counter()
        hits = retriever.retrieve(text, principal, k=20).hits
        latencies.append((time.perf_counter() - started) * 1000)
        found_sections += want in [h.document_id for h in hits[:5]]
        found_docs += want in list(dict.fromkeys(h.document_id for h in hits))[:5]
    retriever.close()
    return {
        "queries": len(alerts),
        "recall@5_distinct_documents": round(found_docs / len(alerts), 4),
        "recall@5_sections": round(found_sections / len(alerts), 4),
        "query_ms_p50": round(median(latencies), 1),
    }


def measure(runs_per_corpus: int, shared: Path, store: BenchStore, corpora: list[str]) -> dict:
    from cairn.embedding import load_encoder
    from cairn.flows.ingest import ingest_flow
    from cairn.schemas.config import EmbeddingConfig

    encoder = load_encoder()
    encoder.encode(["warm up"])
    batch_size = EmbeddingConfig().batch_size  # the raw model runs as the pipeline runs it
    results: dict = {"runs": runs_per_corpus, "store": store.describe(), "encode_batch_size": batch_size, "corpora": {}}
    with tempfile.TemporaryDirectory() as tmp:
        warm = Path(tmp) / "warm"
        (warm / "wiki").mkdir(parents=True)
        (warm / "wiki" / "w.md").write_text("# Warm up\n\nStarts Prefect's temporary server before timing.\n")
        ingest_flow(
            config_path=str(
                scratch_config(
                    warm,
                    [{"name": "w", "type": "wiki", "path": str(warm / "wiki"), "tenant": "bench", "acl": ["all"]}],
                    store=store,
                )
            )
        )
        for name in corpora:
            relative = CORPORA[name]
            runs = []
            for run in range(runs_per_corpus):
                work = Path(tmp) / f"{name}-{run}"
                work.mkdir()
                config = scratch_config(
                    work,
                    [
                        {
                            "name": name,
                            "type": "wiki",
                            "path": str(shared / "corpora" / relative),
                            "tenant": "bench",
                            "acl": ["all"],
                        }
                    ],
                    store=store,
                )
                report = ingest_flow(config_path=str(config))
                texts = texts_embedded(config)
                started = time.perf_counter()
                encoder.encode(texts, batch_size=batch_size)
                raw_seconds = time.perf_counter() - started
                raw_rate = len(texts) / raw_seconds
                quality_seconds = (report.get("quality") or {}).get("seconds", 0.0)
                path_seconds = report["seconds"] - quality_seconds
                runs.append(
                    {
                        "ingest_seconds": report["seconds"],
                        "quality_report_seconds": quality_seconds,
                        "raw_encode_seconds": round(raw_seconds, 3),
                        "texts_embedded": report["embeddings_computed"],
                        "texts_rederived": len(texts),
                        "ingest_chunks_per_s": round(report["chunks"] / report["seconds"], 2),
                        "ingest_texts_per_s": round(report["embeddings_computed"] / report["seconds"], 2),
                        "raw_texts_per_s": round(raw_rate, 2),
                        "throughput_ratio": round((report["embeddings_computed"] / report["seconds"]) / raw_rate, 3),
                        # the same without the data-quality report that ends the run (a fixed cost per run)
                        "ingest_path_ratio": round((report["embeddings_computed"] / path_seconds) / raw_rate, 3),
                        "documents": report["documents"],
                    }
                )
            entry = {
                "documents": runs[0]["documents"],
                **sla(config),
                "runs": runs,
                "median_throughput_ratio": median([r["throughput_ratio"] for r in runs]),
                "median_ingest_path_ratio": median([r["ingest_path_ratio"] for r in runs]),
                "median_quality_report_seconds": median([r["quality_report_seconds"] for r in runs]),
                "median_ingest_chunks_per_s": median([r["ingest_chunks_per_s"] for r in runs]),
                "median_raw_texts_per_s": median([r["raw_texts_per_s"] for r in runs]),
            }
            if name == "prometheus-operator-runbooks":
                entry["eval"] = recall_at_5(config, shared, name)
            entry["measured"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            results["corpora"][name] = entry
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--corpus", action="append", choices=list(CORPORA), help="one corpus (repeatable; default: all)"
    )
    add_store_arguments(parser)
    args = parser.parse_args()
    shared = require_shared()
    with bench_store(args) as store:
        results = measure(args.runs, shared, store, args.corpus or list(CORPORA))
    previous = RESULTS / "runbooks.json"
    if args.corpus and previous.exists():  # the corpora not re-measured keep their last measurement
        results["corpora"] = {**json.loads(previous.read_text()).get("corpora", {}), **results["corpora"]}
    save("runbooks", results)


if __name__ == "__main__":
    main()
