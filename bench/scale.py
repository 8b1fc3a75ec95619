"""Re-ingestion at scale (issue #35): what each scheduled run costs on synthetic wikis of 2k to 100k pages.

    python -m bench.scale --pages 2000,20000,100000 [--phases unchanged,edit,...] [--runs 3] [--queries 20]
                          [--store lite|server --uri http://host:19530] [--work DIR] [--quick] [--prefill-all]

Per size, in increasing order, on a fresh corpus of short runbook/postmortem/how-to pages (bench/scale_corpus.py,
seeded) and a fresh index; results are saved to bench/results/scale.json as soon as each size finishes.

Every `cairn` command is run as a shell or cron runs it: `python -m cairn.cli ... --json` in a process of its
own, timed around the process (interpreter start and imports included; `cli_start_seconds`, a `cairn --help`,
is that floor). No Prefect API: a run with work runs in the command's own process without Prefect (flows/run.py
InlineHost), as a user's shell or cron run does, and an ingest with nothing to do takes the CLI's no-flow path
(flows/noop.py). Phases:
- first ingest (always: the others need its index): wall, per document;
- unchanged: `--runs` re-runs, median wall per document; once more at the end with the index server stopped;
- edit: 1% of the pages edited (one list item added to their last section) and 1% deleted, one re-run: its
  wall over the model's time for the texts that changed, the run's own (its report's `model_seconds`) and the
  model alone here on those texts (re-derived by chunking each page before and after); `--runs` rounds on other
  pages each, their medians, and how many rounds were within the goal (2x + 3 s; bench/scale_edit.py);
- status, reconcile, report: one run each; status once more at the end with the index server stopped first (the
  Lite server otherwise stays up: this process holds a lease on it); report counts the outcomes the ingests'
  checks kept, checking what has none (`checked_now`), then `report --scan` checks every row, read anew;
- retrieve: `--queries` generated questions through one cairn.query.Retriever in this process, p50/p95 (the
  first question, which loads the query model, excluded);
- always: the Lite index server's peak memory (VmHWM of its process, kept alive by a lease this process holds
  from the first ingest on) and the index folder's disk use.

The model. At the smallest size the real model embeds everything, and this process then times the model alone
(warm, at the pipeline's batch size) on exactly the texts that ingest embedded: the pipeline/model ratio. At
larger sizes the first ingest runs on a pre-filled embedding cache, said so in the output: the model embeds a
pool of `--pool` texts of that corpus once (per benchmark run), and every text of the corpus gets, under its own
cache key (index/cache.py text_key), the vector of the pool text its key picks plus seeded noise of norm 0.2
(cosine ~0.98 to it, so no two rows share a vector). The edit phase always runs the real model on what changed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bench.common import (
    MB,
    BenchStore,
    add_store_arguments,
    bench_store,
    cairn_command,
    disk_mb,
    keep_reports_in,
    median,
    peak_rss_mb,
    percentile,
    save,
    scratch_config,
)
from bench.runbooks import texts_embedded
from bench.scale_corpus import SOURCE, questions, write_corpus
from bench.scale_edit import edit
from bench.scale_table import table

if TYPE_CHECKING:
    from cairn.embedding.encoder import Encoder
    from cairn.schemas.config import CairnConfig, EmbeddingConfig

PHASES = ("unchanged", "edit", "status", "reconcile", "report", "retrieve")
NOISE_NORM = 0.2  # of the jitter added to a borrowed pool vector: cosine ~0.98 to it


@dataclass
class Bench:
    """What every size of one benchmark run shares: its arguments and store, Prefect's database, the model."""

    args: argparse.Namespace
    store: BenchStore
    scratch: Path
    encoder: Encoder | None = None  # the configured encoder, loaded and warmed on first use
    pool: np.ndarray | None = None  # real vectors of `--pool` texts, computed once
    pool_seconds: float = 0.0
    phases: set[str] = field(default_factory=set)

    @property
    def prefect_home(self) -> Path:
        return self.scratch / "prefect-home"

    def cairn(self, *args: str) -> dict:
        """A `cairn` command's --json output and wall seconds (as "wall_seconds" and "exit_code")."""
        run = cairn_command([*args, "--json"], self.prefect_home)
        return {"output": run.json(), "wall_seconds": round(run.seconds, 3), "exit_code": run.exit_code}

    def model(self, embedding: EmbeddingConfig) -> Encoder:
        """The configured encoder in this process, its weights loaded and warm."""
        if self.encoder is None:
            from cairn.embedding import encoder_for

            self.encoder = encoder_for(embedding)
            self.encoder.encode(["warm up"], batch_size=embedding.batch_size)
        return self.encoder

    def model_seconds(self, embedding: EmbeddingConfig, texts: list[str]) -> float:
        """The model alone on `texts`, warm, at the pipeline's batch size."""
        encoder = self.model(embedding)
        started = time.perf_counter()
        encoder.encode(texts, batch_size=embedding.batch_size)
        return time.perf_counter() - started


def prefill(bench: Bench, config: CairnConfig, texts: list[str]) -> dict:
    """Every text's key in the embedding cache, holding a pool vector plus noise (the module docstring)."""
    from cairn.index.cache import EmbeddingCache, text_key

    started = time.perf_counter()
    encoder = bench.model(config.embedding)
    if bench.pool is None:
        chosen = texts[:: max(1, len(texts) // bench.args.pool)][: bench.args.pool]
        pooled = time.perf_counter()
        bench.pool = np.asarray(encoder.encode(chosen, batch_size=config.embedding.batch_size), np.float32)
        bench.pool_seconds = time.perf_counter() - pooled
    cache = EmbeddingCache(config.embedding.cache_path, bench.pool.shape[1])
    noise = np.random.default_rng(bench.args.seed)
    identity = encoder.identity
    for start in range(0, len(texts), 20_000):
        keys = [text_key(identity, t) for t in texts[start : start + 20_000]]
        base = bench.pool[[int(k[:12], 16) % len(bench.pool) for k in keys]]
        jitter = noise.standard_normal(base.shape).astype(np.float32)
        jitter *= NOISE_NORM / np.linalg.norm(jitter, axis=1, keepdims=True)
        vectors = base + jitter
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        cache.put_many(dict(zip(keys, vectors)))
    cache.close()
    return {
        "texts": len(texts),
        "pool_texts": len(bench.pool),
        "pool_model_seconds": round(bench.pool_seconds, 1),
        "seconds": round(time.perf_counter() - started, 1),
    }


def first_ingest(bench: Bench, config_path: Path, pages: int, real_model: bool) -> tuple[dict, list[str]]:
    """The first ingest (on a pre-filled cache unless `real_model`) and the texts it embeds."""
    from cairn.schemas.config import load_config

    config = load_config(config_path)
    texts = texts_embedded(config_path)
    out: dict = {"embeddings": "real model" if real_model else "pre-filled cache"}
    if not real_model:
        out["prefill"] = prefill(bench, config, texts)
    run = bench.cairn("ingest", "--config", str(config_path))
    report = run["output"]
    out.update(
        wall_seconds=run["wall_seconds"],
        ms_per_document=round(run["wall_seconds"] * 1000 / pages, 2),
        run_report_seconds=report["seconds"],
        documents=report["documents"],
        rows_written=report["rows_written"],
        embeddings_computed=report["embeddings_computed"],
        texts=len(texts),
    )
    return out, texts


def model_share(bench: Bench, embedding: EmbeddingConfig, texts: list[str], wall: float) -> dict:
    """The model alone on the texts an ingest embedded, against that ingest's wall time."""
    model = bench.model_seconds(embedding, texts)
    return {
        "model_seconds": round(model, 1),
        "wall_over_model": round(wall / model, 3),
        "overhead_over_model": round((wall - model) / model, 3),  # goal <= 0.2
    }


def unchanged(bench: Bench, config_path: Path, pages: int) -> dict:
    runs = [bench.cairn("ingest", "--config", str(config_path)) for _ in range(bench.args.runs)]
    walls = [r["wall_seconds"] for r in runs]
    return {
        "wall_seconds": walls,
        "ms_per_document": round(median(walls) * 1000 / pages, 3),  # goal <= 0.25 at 20k and 100k
        "no_flow_run": [r["output"]["run_id"].startswith("unchanged-") for r in runs],  # flows/noop.py
        "embeddings_computed": [r["output"]["embeddings_computed"] for r in runs],
    }


def inspect(bench: Bench, command: str, config_path: Path, *flags: str) -> dict:
    run = bench.cairn(command, "--config", str(config_path), *flags)
    out = {"wall_seconds": run["wall_seconds"], "exit_code": run["exit_code"]}
    if command == "status":
        out["rows"] = sum(r["rows"] for r in run["output"]["rows"])
    elif command == "reconcile":
        out["clean"] = run["output"]["clean"]
    elif command == "report":  # rows great-expectations checked in it (the others counted from kept outcomes)
        out.update(rows=run["output"]["rows"], checked_now=run["output"].get("checked_now"))
    return out


def retrieve(bench: Bench, config_path: Path, pages: int, rows: int) -> dict:
    """`--queries` questions through one Retriever, each followed by the brute-force limit over as many rows
    (bench/brute.py: noise hits both alike); p50/p95 of each, their ratio, and each step's median."""
    from bench.brute import BruteForce
    from cairn.query import Principal, Retriever

    asked = questions(bench.args.seed, pages, bench.args.queries + 1)
    retriever = Retriever.from_config(config_path)
    principal = Principal(SOURCE["tenant"], SOURCE["acl"])
    limit = BruteForce(rows)
    latencies, answered, brute = [], [], []
    steps: dict[str, list[float]] = {}
    try:
        for text in asked:
            started = time.perf_counter()
            result = retriever.retrieve(text, principal)
            latencies.append((time.perf_counter() - started) * 1000)
            answered.append(bool(result.hits))
            brute.append(limit.question())
            for step, ms in result.diagnostics.get("timings_ms", {}).items():
                steps.setdefault(step, []).append(ms)
    finally:
        retriever.close()
    measured = latencies[1:]  # the first loads the query model
    p95 = percentile(measured, 0.95)
    return {
        "queries": len(measured),
        "answered": sum(answered[1:]),
        "p50_ms": round(percentile(measured, 0.5), 1),
        "p95_ms": round(p95, 1),
        "brute_rows": rows,
        "brute_p50_ms": round(percentile(brute[1:], 0.5), 1),
        "brute_p95_ms": round(percentile(brute[1:], 0.95), 1),
        "p95_over_brute_p95": round(p95 / percentile(brute[1:], 0.95), 2),  # goal <= 10 (issue #52)
        "step_p50_ms": {k: round(median(v[1:]), 1) for k, v in steps.items() if len(v) > 1},
        "load_average_1m": round(os.getloadavg()[0], 1),
    }


def server_pid(folder: Path) -> int | None:
    """The pid of the Lite server serving `folder`, from the `<folder>.server` record it writes."""
    try:
        return int(json.loads(folder.with_name(folder.name + ".server").read_text())["pid"])
    except (OSError, ValueError, KeyError):
        return None


def config_for(work: Path, store: BenchStore) -> Path:
    """The scratch config of the wiki under work/wiki, its quality reports in work/reports."""
    path = scratch_config(work, [{**SOURCE, "path": str(work / "wiki")}], store=store)
    keep_reports_in(path, work / "reports")
    return path


def warm_up(bench: Bench) -> None:
    """One page ingested, not measured: creates Prefect's database, which a user's first run only pays once."""
    from cairn.index import liteserver
    from cairn.schemas.config import load_config

    work = bench.scratch / "warm-up"
    write_corpus(work / "wiki", bench.args.seed, 1)
    config = load_config(config_for(work, bench.store))
    bench.cairn("ingest", "--config", str(config.config_path))
    if config.milvus.is_lite:
        liteserver.stop(Path(config.milvus.uri))


def measure(bench: Bench, pages: int, real_model: bool) -> dict:
    """Every selected phase at one size, on a fresh corpus and index under the scratch folder."""
    from cairn.index import liteserver
    from cairn.index.milvus import Connection
    from cairn.schemas.config import load_config

    work = bench.scratch / f"pages-{pages}"
    corpus = work / "wiki"
    started = time.perf_counter()
    written = write_corpus(corpus, bench.args.seed, pages)
    result: dict = {"pages": pages, "corpus_mb": round(written / MB, 1)}
    config_path = config_for(work, bench.store)
    config = load_config(config_path)
    folder = Path(config.milvus.uri).resolve() if config.milvus.is_lite else None
    result["first_ingest"], texts = first_ingest(bench, config_path, pages, real_model)
    lease = Connection.open(config.milvus, create=False)  # at once: keeps the ingest's Lite server (its peak) alive
    pid = server_pid(folder) if folder else None
    try:
        if real_model:
            result["first_ingest"].update(
                model_share(bench, config.embedding, texts, result["first_ingest"]["wall_seconds"])
            )
        del texts
        if "unchanged" in bench.phases:
            result["unchanged"] = unchanged(bench, config_path, pages)
        if "edit" in bench.phases:
            result["edit"] = edit(bench, config_path, corpus, pages)
        for command in ("status", "reconcile", "report"):
            if command in bench.phases:
                result[command] = inspect(bench, command, config_path)
        if "report" in bench.phases:  # the full check a report over what changed must equal (docs/quality.md)
            result["report_scan"] = inspect(bench, "report", config_path, "--scan")
        if "retrieve" in bench.phases:
            written = result.get("status", {}).get("rows") or result["first_ingest"]["rows_written"]
            result["retrieve"] = retrieve(bench, config_path, pages, written)
        if folder:
            same = server_pid(folder) == pid
            result["server_peak_rss_mb"] = peak_rss_mb(pid) if same else None  # None: it restarted meanwhile
            result["disk_mb"] = {"milvus": disk_mb(folder), "index_folder": disk_mb(folder.parent)}
        lease.close()
        if folder and "unchanged" in bench.phases:  # what an hourly run pays when the index server idled out
            liteserver.stop(folder)
            result["unchanged_cold_index"] = bench.cairn("ingest", "--config", str(config_path))["wall_seconds"]
        if folder and "status" in bench.phases:  # the same for a command
            liteserver.stop(folder)
            result["status_cold_index"] = inspect(bench, "status", config_path)
    finally:
        lease.close()
        if folder:
            liteserver.stop(folder)
        shutil.rmtree(work, ignore_errors=True)
    rows = result.get("status", {}).get("rows") or result["first_ingest"]["rows_written"]
    result["rows"] = rows
    if result.get("server_peak_rss_mb"):
        result["server_kb_per_row"] = round(result["server_peak_rss_mb"] * 1024 / rows, 1)
    result["seconds"] = round(time.perf_counter() - started, 1)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", default="2000,20000,100000", help="corpus sizes, run in increasing order")
    parser.add_argument("--quick", action="store_true", help="one size of 200 pages (development)")
    parser.add_argument("--phases", default=",".join(PHASES), help=f"a subset of {','.join(PHASES)}")
    parser.add_argument("--runs", type=int, default=3, help="unchanged re-runs and edit rounds (their medians)")
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--pool", type=int, default=512, help="texts embedded for the pre-filled sizes' vectors")
    parser.add_argument(
        "--prefill-all", action="store_true", help="the smallest size on the pre-filled cache too (no model share)"
    )
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--work", type=Path, default=None, help="where the scratch folder goes (default: $TMPDIR)")
    add_store_arguments(parser)
    args = parser.parse_args()
    phases = {p.strip() for p in args.phases.split(",") if p.strip()}
    if phases - set(PHASES):
        parser.error(f"--phases: unknown {', '.join(sorted(phases - set(PHASES)))}; choose from {', '.join(PHASES)}")
    sizes = [200] if args.quick else sorted({int(x) for x in args.pages.split(",")})
    from cairn.flows import prefect_server

    with tempfile.TemporaryDirectory(dir=args.work, prefix="cairn-scale-") as tmp, bench_store(args) as store:
        bench = Bench(args, store, Path(tmp), phases=phases)
        warm_up(bench)
        results = {
            "store": store.describe(),
            "seed": args.seed,
            "phases": sorted(phases),
            "commands": "python -m cairn.cli <command> --json, one process each, wall time around the process",
            "cli_start_seconds": round(cairn_command(["--help"], bench.prefect_home).seconds, 2),
            "embeddings": ("" if args.prefill_all else f"real model at {sizes[0]} pages; larger sizes ")
            + f"on a pre-filled cache (pool of {args.pool} real vectors of the corpus's own texts + noise, "
            "bench/scale.py)",
            "sizes": [],
        }
        for n in sizes:
            print(f"{n} pages ...", file=sys.stderr, flush=True)
            results["sizes"].append(measure(bench, n, real_model=n == sizes[0] and not args.prefill_all))
            save("scale", results, echo=False)
            print(table(results), flush=True)
        prefect_server.stop(bench.prefect_home.resolve())


if __name__ == "__main__":
    main()
