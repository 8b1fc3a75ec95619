"""retrieve() latency at scale beside a raw unfiltered hybrid_search over the same collection, same run.

    python -m bench.query_speed [--rows 10000,100000] [--queries 60] [--short 5] [--work DIR]
                                [--store lite|server --uri http://host:19530]

Synthetic documents (3 sections of 3 children each; random unit vectors, text drawn from a fixed vocabulary;
4 tenants x 8 groups) go into a scratch Milvus Lite index (served by its Lite server process, as in use), or with
--store server into a collection of their own on a Milvus server, dropped at the end. The query encoder is a
deterministic random projection: the model is not what is measured. Per query, in turn: retrieve() with the
tenant + ACL filter, and the raw hybrid_search its enabled legs amount to (dense full text and BM25 by
default; RRF; no filter; the same candidate count), so noise hits both alike. Every client call retrieve() makes is
timed through a proxy: the pipeline's own overhead is the rest; each step's median from the conductor's timings.
After each question, the brute-force limit over as many rows (bench/brute.py): `retrieve_vs_brute_p95` (issue #52's
goal: <= 10 at 100k rows). Then --short questions of two words, which the gate checks against the index. With
--work the index of each size is kept there and reused by later runs (lite). Results:
bench/results/query_speed.json, with `sizes`: [{rows, retrieve_p50_ms, retrieve_p95_ms, brute_p95_ms,
retrieve_vs_brute_p95, raw_hybrid_p50_ms, raw_hybrid_p95_ms, step_p50_ms, ...}].
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.brute import BruteForce
from bench.common import BenchStore, add_store_arguments, bench_store, percentile, save

DIM = 384
SECTIONS, CHILDREN = 3, 3  # per document
TENANTS = ["acme", "globex", "initech", "umbrella"]
GROUPS = ["sre", "security", "platform", "payments", "legal", "ops", "data", "support"]
rng = random.Random(11)
VOCAB = [
    f"{a}{b}"
    for a in ("kafka", "ledger", "pod", "node", "cert", "disk", "dns", "queue", "cache", "db")
    for b in ("", "-lag", "-restart", "-failover", "-timeout", "-leak", "-full", "-error", "-drain", "-scale")
]


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

    encode_queries = encode


class TimedClient:
    """Forwards to a MilvusClient and adds up the wall time of its reads."""

    def __init__(self, client) -> None:
        self.client, self.ms, self.calls, self.counts = client, 0.0, {}, {}

    def __getattr__(self, name):
        target = getattr(self.client, name)
        if name not in ("search", "query", "get", "hybrid_search"):
            return target

        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return target(*args, **kwargs)
            finally:
                spent = (time.perf_counter() - started) * 1000
                self.ms += spent
                leg = kwargs.get("anns_field") or ("by-id" if name == "get" else "by-filter")
                label = f"{name}:{leg}"
                self.calls[label] = self.calls.get(label, 0.0) + spent
                self.counts[label] = self.counts.get(label, 0) + 1

        return timed


def rows_for(doc: int, vectors: np.random.Generator) -> list[dict]:
    """One document's rows as Cairn writes them (index/rows.py): per section a parent naming its neighbours."""
    from cairn.schemas.collection import acl_key
    from cairn.schemas.row_links import ParentLinks

    tenant = TENANTS[doc % len(TENANTS)]
    acl = sorted({GROUPS[doc % len(GROUPS)], GROUPS[(doc * 7 + 3) % len(GROUPS)]})
    words = lambda n: " ".join(rng.choice(VOCAB) for _ in range(n))  # noqa: E731
    title = f"Runbook {doc} {words(3)}"

    def unit():
        v = vectors.standard_normal(DIM).astype(np.float32)
        return (v / np.linalg.norm(v)).tolist()

    parent_ids = [f"p{doc}-{s}" for s in range(SECTIONS)]
    rows = []
    for s in range(SECTIONS):
        base = dict(
            document_id=f"d{doc}",
            source_name="synthetic",
            source_type="wiki",
            source_uri=f"file:///s/{doc}.md",
            locator=f"{doc}.md",
            title=title,
            content_type="runbook",
            service_name="",
            environment="unspecified",
            severity="unspecified",
            tenant_id=tenant,
            access_control_list=acl,
            acl_key=acl_key(acl),
            version_hash=f"v{doc}",
            temporal_start=1_700_000_000,
            temporal_end=253402300799,
            is_current=True,
            created_at=1_700_000_000,
            updated_at=1_700_000_000,
            tags=[],
            doc_tag="",
            extra={},
            section_id=f"s{doc}-{s}",
            parent_section_id="",
            breadcrumbs=[title, f"Step {s}"],
            section_level=2,
            section_order=s,
            quality_flags={},
        )
        abstract = unit()
        texts = [words(120) for _ in range(CHILDREN)]
        rows.append(
            dict(
                base,
                chunk_id=parent_ids[s],
                parent_chunk_id="",
                chunk_type="full_text",
                chunk_order=-1,
                token_count=450,
                text=" ".join(texts),
                search_text=" ".join(texts),
                abstract_embedding=abstract,
                full_text_embedding=unit(),
                extra=ParentLinks(
                    abstract=texts[0][:300],
                    abstract_token_count=60,
                    child_count=CHILDREN,
                    section_count=SECTIONS,
                    document_child_count=SECTIONS * CHILDREN,
                    previous_section=parent_ids[s - 1] if s else "",
                    next_section=parent_ids[s + 1] if s + 1 < SECTIONS else "",
                ).to_row(),
            )
        )
        rows.extend(
            dict(
                base,
                chunk_id=f"c{doc}-{s}-{i}",
                parent_chunk_id=parent_ids[s],
                chunk_type="child",
                chunk_order=i,
                token_count=150,
                text=t,
                search_text=t,
                abstract_embedding=abstract,
                full_text_embedding=unit(),
            )
            for i, t in enumerate(texts)
        )
    return rows


def write_rows(config, children: int) -> None:
    """`children` synthetic child rows (their documents' parents besides) into the collection `config` names."""
    from cairn.index.store import MilvusStore
    from cairn.schemas.rows import ChunkRow

    store = MilvusStore(config, DIM)
    store.ensure_collection()
    vectors = np.random.default_rng(5)
    batch: list[dict] = []
    for doc in range(children // (SECTIONS * CHILDREN)):
        batch.extend(rows_for(doc, vectors))
        if len(batch) >= 2000:
            store.upsert([ChunkRow.from_row(r) for r in batch])
            batch = []
    store.upsert([ChunkRow.from_row(r) for r in batch])
    store.flush()
    store.close()


def measure(children: int, queries: int, work: Path, where: BenchStore, short_questions: int = 5) -> dict:
    from pymilvus import AnnSearchRequest, RRFRanker

    from cairn.index.milvus import Connection
    from cairn.query import Principal
    from cairn.query.retriever import Retriever
    from cairn.schemas.collection import SEARCH_FIELDS, SPARSE_FIELD
    from cairn.schemas.config import QueryConfig

    config = where.milvus_config(work / f"speed-{children}", "speed")
    built = work / f"speed-{children}" / "built"  # with --work, a later run reuses the index (not timed again)
    started = time.perf_counter()
    if not built.exists():
        write_rows(config, children)
        built.write_text(str(children))
    insert_s = time.perf_counter() - started

    connection = Connection.open(config, create=False)
    raw_client = connection.client
    client = TimedClient(raw_client)
    client.load_collection(config.collection)
    # Random vectors sit below every relevance floor; with floors off every later step (fetch, expansion,
    # packing) runs on every query, so the overhead measured is the whole pipeline's.
    settings = QueryConfig(steps={"floors": False})
    retriever = Retriever(config, settings, HashEncoder(), client=client)
    limit = max(settings.candidates, 8 * 4)
    questions = [
        f"{rng.choice(VOCAB)} {rng.choice(VOCAB)} {rng.choice(VOCAB)} on the primary" for _ in range(queries + 5)
    ]
    principals = [Principal(TENANTS[i % 4], [GROUPS[i % 8], GROUPS[(i + 3) % 8]]) for i in range(len(questions))]
    encoder = HashEncoder()
    totals, raw, hybrid, brute = [], [], [], []
    steps: dict[str, list[float]] = {}
    limit_run = BruteForce(children + children // CHILDREN)  # every row of the collection: children and parents
    for i, (q, p) in enumerate(zip(questions, principals)):
        client.ms = 0.0
        t0 = time.perf_counter()
        result = retriever.retrieve(q, p, k=8)
        elapsed = (time.perf_counter() - t0) * 1000
        v = encoder.encode([q])[0].tolist()
        dense = {"params": {"ef": max(64, limit * 2)}}
        legs = [
            AnnSearchRequest([v], field, dense, limit)
            for field, step in (("full_text_embedding", "dense_leg"), ("abstract_embedding", "abstract_leg"))
            if settings.enabled(step)
        ]
        legs.append(AnnSearchRequest([q], SPARSE_FIELD, {}, limit))
        t1 = time.perf_counter()
        raw_client.hybrid_search(config.collection, legs, RRFRanker(60), limit=limit, output_fields=SEARCH_FIELDS)
        hybrid_ms = (time.perf_counter() - t1) * 1000
        brute_ms = limit_run.question()
        if i == 4:
            client.calls, client.counts, steps = {}, {}, {}
        if i >= 5:  # warm-up excluded
            totals.append(elapsed)
            raw.append(client.ms)
            hybrid.append(hybrid_ms)
            brute.append(brute_ms)
            for step, ms in result.diagnostics.get("timings_ms", {}).items():
                steps.setdefault(step, []).append(ms)
    calls, counts = dict(client.calls), dict(client.counts)
    short: list[float] = []  # two content words: the gate asks the index whether one is specific (query/specific.py)
    gate_steps: dict[str, list[float]] = {}
    for i in range(short_questions + 1):
        t0 = time.perf_counter()
        result = retriever.retrieve(f"{VOCAB[10 * i]} {VOCAB[10 * ((i + 3) % 10)]}", principals[i], k=8)
        short.append((time.perf_counter() - t0) * 1000)
        for step, ms in result.diagnostics.get("timings_ms", {}).items():
            gate_steps.setdefault(step, []).append(ms)
    connection.close()
    q = lambda xs, f: round(percentile(xs, f), 1)  # noqa: E731
    overhead = [(t - r) / r for t, r in zip(totals, raw) if r > 0]
    return {
        "rows": children,
        "collection_rows": children + children // CHILDREN,
        "load_average_1m": round(os.getloadavg()[0], 1),
        "documents": children // (SECTIONS * CHILDREN),
        "insert_seconds": round(insert_s, 1),
        "queries": len(totals),
        "retrieve_p50_ms": q(totals, 0.5),
        "retrieve_p95_ms": q(totals, 0.95),
        "raw_hybrid_p50_ms": q(hybrid, 0.5),
        "raw_hybrid_p95_ms": q(hybrid, 0.95),
        "retrieve_vs_raw_hybrid_p95": round(q(totals, 0.95) / q(hybrid, 0.95), 3),
        "milvus_calls_p50_ms": q(raw, 0.5),
        "pipeline_overhead_median": round(statistics.median(overhead), 4),
        "brute_p50_ms": q(brute, 0.5),
        "brute_p95_ms": q(brute, 0.95),
        "retrieve_vs_brute_p95": round(q(totals, 0.95) / q(brute, 0.95), 2),  # goal: <= 10 at 100k rows
        "milvus_ms_mean_by_call": {k: round(v / max(1, len(totals)), 1) for k, v in sorted(calls.items())},
        "milvus_calls_per_question": {k: round(v / max(1, len(totals)), 2) for k, v in sorted(counts.items())},
        "step_p50_ms": {k: round(statistics.median(v), 1) for k, v in steps.items()},
        "short_question_p50_ms": q(short[1:], 0.5),
        "short_question_step_p50_ms": {k: round(statistics.median(v[1:]), 1) for k, v in gate_steps.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default="10000,100000")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--short", type=int, default=5, help="questions of two words (the gate's index path)")
    parser.add_argument("--work", type=Path, default=None, help="keep the indexes here and reuse them (lite)")
    add_store_arguments(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, bench_store(args) as store:
        results = {"store": store.describe(), "sizes": []}
        work = args.work if args.work and store.kind == "lite" else Path(tmp)
        for n in (int(x) for x in args.rows.split(",")):
            (work / f"speed-{n}").mkdir(parents=True, exist_ok=True)
            results["sizes"].append(measure(n, args.queries, work, store, args.short))
            print(results["sizes"][-1], flush=True)
    save("query_speed", results)


if __name__ == "__main__":
    main()
