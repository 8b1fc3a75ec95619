"""retrieve() latency at scale beside the raw Milvus calls it makes, measured in the same calls.

    python -m bench.query_speed [--rows 10000,100000] [--queries 60] [--store lite|server --uri http://host:19530]

Synthetic rows (random unit vectors, text drawn from a fixed vocabulary; 4 tenants x 8 groups; 3 children
and 1 parent per document) go into a scratch Milvus Lite file (or, with --store server, a collection of
their own on a Milvus server, dropped at the end). The query encoder is a deterministic random projection
(the model is not what is measured). Every client call retrieve() makes is timed through a
proxy, so "raw Milvus" is exactly the calls of the measured queries and the pipeline's own overhead is the
rest. Also: the same dense search with and without the tenant+ACL filter. Results: bench/results/query_speed.json.
"""
from __future__ import annotations

import argparse
import hashlib
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import BenchStore, add_store_arguments, bench_store, save

DIM = 384
TENANTS = ["acme", "globex", "initech", "umbrella"]
GROUPS = ["sre", "security", "platform", "payments", "legal", "ops", "data", "support"]
rng = random.Random(11)
VOCAB = [f"{a}{b}" for a in ("kafka", "ledger", "pod", "node", "cert", "disk", "dns", "queue", "cache", "db")
         for b in ("", "-lag", "-restart", "-failover", "-timeout", "-leak", "-full", "-error", "-drain", "-scale")]


class HashEncoder:
    """Text -> a fixed random unit vector (seeded by the text): stable, model-free query vectors."""

    identity = "hash-384"
    dim = DIM

    def encode(self, texts, **_):
        out = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
            v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
            out.append(v / np.linalg.norm(v))
        return np.stack(out)


class TimedClient:
    """Forwards to a MilvusClient and adds up the wall time of search/query calls."""

    def __init__(self, client) -> None:
        self.client, self.ms, self.calls = client, 0.0, {}

    def __getattr__(self, name):
        target = getattr(self.client, name)
        if name not in ("search", "query", "hybrid_search"):
            return target

        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return target(*args, **kwargs)
            finally:
                spent = (time.perf_counter() - started) * 1000
                self.ms += spent
                label = f"{name}:{kwargs.get('anns_field') or 'by-filter'}"
                self.calls[label] = self.calls.get(label, 0.0) + spent

        return timed


def rows_for(doc: int, vectors: np.random.Generator) -> list[dict]:
    from cairn.schemas.collection import acl_key

    tenant = TENANTS[doc % len(TENANTS)]
    acl = sorted({GROUPS[doc % len(GROUPS)], GROUPS[(doc * 7 + 3) % len(GROUPS)]})
    words = lambda n: " ".join(rng.choice(VOCAB) for _ in range(n))  # noqa: E731
    title = f"Runbook {doc} {words(3)}"
    base = dict(document_id=f"d{doc}", source_name="synthetic", source_type="wiki", source_uri=f"file:///s/{doc}.md",
                locator=f"{doc}.md", title=title, content_type="runbook", service_name="", environment="unspecified",
                severity="unspecified", tenant_id=tenant, access_control_list=acl, acl_key=acl_key(acl), version_hash=f"v{doc}",
                temporal_start=1_700_000_000, temporal_end=253402300799, is_current=True, created_at=1_700_000_000,
                updated_at=1_700_000_000, tags=[], doc_tag="", extra={}, section_id=f"s{doc}", parent_section_id="",
                breadcrumbs=[title], section_level=1, section_order=0, quality_flags={})

    def unit():
        v = vectors.standard_normal(DIM).astype(np.float32)
        return (v / np.linalg.norm(v)).tolist()

    abstract = unit()
    texts = [words(120) for _ in range(3)]
    parent = dict(base, chunk_id=f"p{doc}", parent_chunk_id="", chunk_type="full_text", chunk_order=-1, token_count=450,
                  text=" ".join(texts), search_text=" ".join(texts), abstract_embedding=abstract, full_text_embedding=unit(),
                  extra={"abstract": texts[0][:300], "abstract_token_count": 60})
    children = [dict(base, chunk_id=f"c{doc}-{i}", parent_chunk_id=f"p{doc}", chunk_type="child", chunk_order=i,
                     token_count=150, text=t, search_text=t, abstract_embedding=abstract, full_text_embedding=unit())
                for i, t in enumerate(texts)]
    return children + [parent]


def measure(children: int, queries: int, work: Path, where: BenchStore) -> dict:
    from cairn.index.milvus import open_client
    from cairn.index.store import MilvusStore
    from cairn.query import Principal
    from cairn.query.retriever import Retriever
    from cairn.schemas.collection import access_filter
    from cairn.schemas.config import QueryConfig

    config = where.milvus_config(work / f"speed-{children}", "speed")
    store = MilvusStore(config, DIM)
    store.ensure_collection()
    vectors = np.random.default_rng(5)
    started = time.perf_counter()
    batch: list[dict] = []
    for doc in range(children // 3):
        batch.extend(rows_for(doc, vectors))
        if len(batch) >= 2000:
            store.upsert(batch)
            batch = []
    store.upsert(batch)
    store.flush()
    store.close()
    insert_s = time.perf_counter() - started

    client = TimedClient(open_client(config, create=False))
    client.load_collection(config.collection)
    # Random vectors sit below every relevance floor; with floors off every later step (fetch, expansion,
    # packing) runs on every query, so the overhead measured is the whole pipeline's.
    retriever = Retriever(config, QueryConfig(steps={"floors": False}), HashEncoder(), client=client)
    questions = [f"{rng.choice(VOCAB)} {rng.choice(VOCAB)} {rng.choice(VOCAB)} on the primary" for _ in range(queries + 5)]
    principals = [Principal(TENANTS[i % 4], [GROUPS[i % 8], GROUPS[(i + 3) % 8]]) for i in range(len(questions))]
    totals, raw = [], []
    for i, (q, p) in enumerate(zip(questions, principals)):
        client.ms = 0.0
        t0 = time.perf_counter()
        retriever.retrieve(q, p, k=8)
        elapsed = (time.perf_counter() - t0) * 1000
        if i == 4:
            client.calls = {}
        if i >= 5:  # warm-up excluded
            totals.append(elapsed)
            raw.append(client.ms)
    # the same dense search with and without the tenant + ACL pre-filter
    filtered, unfiltered = [], []
    encoder = HashEncoder()
    for q, p in zip(questions[5:], principals[5:]):
        v = encoder.encode([q])[0].tolist()
        for expr, sink in ((f'{access_filter(p.tenant, p.groups)} and chunk_type == "child"', filtered), ('chunk_type == "child"', unfiltered)):
            t0 = time.perf_counter()
            client.client.search(config.collection, data=[v], anns_field="full_text_embedding", limit=50, filter=expr, output_fields=["parent_chunk_id"])
            sink.append((time.perf_counter() - t0) * 1000)
    client.client.close()
    q = lambda xs, f: round(sorted(xs)[min(len(xs) - 1, int(len(xs) * f))], 1)  # noqa: E731
    overhead = [(t - r) / r for t, r in zip(totals, raw) if r > 0]
    return {
        "child_rows": children, "insert_seconds": round(insert_s, 1), "queries": len(totals),
        "retrieve_ms_p50": q(totals, 0.5), "retrieve_ms_p95": q(totals, 0.95),
        "raw_milvus_ms_p50": q(raw, 0.5), "raw_milvus_ms_p95": q(raw, 0.95),
        "pipeline_overhead_median": round(statistics.median(overhead), 4),
        "raw_milvus_ms_mean_by_call": {k: round(v / max(1, len(totals)), 1) for k, v in sorted(client.calls.items())},
        "dense_search_filtered_ms_p50": q(filtered, 0.5), "dense_search_unfiltered_ms_p50": q(unfiltered, 0.5),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default="10000,100000")
    parser.add_argument("--queries", type=int, default=60)
    add_store_arguments(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, bench_store(args) as store:
        results = {"store": store.describe(), "runs": []}
        for n in (int(x) for x in args.rows.split(",")):
            results["runs"].append(measure(n, args.queries, Path(tmp), store))
            print(results["runs"][-1], flush=True)
    save("query_speed", results)


if __name__ == "__main__":
    main()
