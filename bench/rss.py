"""Peak memory of an ingest of 10x a corpus against 1x (issue #9; goal: ratio <= 1.2, ingestion streams).

    python -m bench.rss [--runs 3] [--scale 10] [--pages 64] [--store lite|server --uri http://host:19530]

Corpus: `--pages` pages of the shared openshift runbooks, evenly spaced over the pages sorted by path (so
short and long pages both occur), copied into folders copy-01, copy-02, ... One copy is the 1x corpus,
`--scale` copies the Nx corpus; copy-01 is byte-identical in both. Copy k's H1 title says "(copy k)": the
title heads every model input (context header), so no input of one copy equals one of another and the
embedding cache dedupes nothing (checked below: embeddings computed Nx = N * 1x). A subset because
embedding is ~25 texts/s end to end here: the whole corpus at 10x would take ~10 min per run.
The page count is a multiple of the source's batch_size (32 documents), so every copy is cut into the
same batches as the 1x corpus: the model's working memory peaks on the largest batch (attention is
batch x heads x 256 x 256 floats), so batches cut differently would differ in peak for that reason alone.

Each ingest is `python -m cairn.cli ingest --json` in a fresh process with a fresh index, embedding cache
and Prefect home, no PREFECT_API_URL (so, as a user's first run, the CLI starts Prefect's temporary server
as its own child process). Measured:
- peak_rss_mb: the kernel's ru_maxrss of the ingest process from os.wait4, i.e. the largest peak of any
  single process in its tree (the ingest process itself: the model, chunking, Milvus Lite in-process);
- polled every 0.2 s with psutil: the ingest process alone, the Prefect server, and the tree's summed RSS.
The first ingest of a bench run (a one-page warm-up, not measured) creates the Prefect database.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.common import (
    REPO,
    BenchStore,
    add_store_arguments,
    bench_store,
    keep_reports_in,
    median,
    require_shared,
    save,
    scratch_config,
)

CORPUS = "wiki/openshift-runbooks"
MB = 1024 * 1024
_H1 = re.compile(r"^(#\s+.+?)\s*$", re.MULTILINE)


def select_pages(corpus: Path, count: int) -> list[str]:
    pages = sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*.md"))
    count = min(count, len(pages))
    return [pages[i * len(pages) // count] for i in range(count)]


def write_copies(corpus: Path, pages: list[str], target: Path, copies: int) -> int:
    """`copies` copies of the pages under target/copy-NN; returns the bytes written."""
    written = 0
    for k in range(1, copies + 1):
        for page in pages:
            text = (corpus / page).read_text(encoding="utf-8")
            text, found = _H1.subn(rf"\1 (copy {k})", text, count=1)
            if not found:
                text = f"# {Path(page).stem} (copy {k})\n\n{text}"
            out = target / f"copy-{k:02d}" / page
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8")
            written += len(text.encode("utf-8"))
    return written


class Poller(threading.Thread):
    """RSS of a process tree every `interval` seconds: peak of the root, of each child, and of the sum."""

    def __init__(self, pid: int, interval: float = 0.2) -> None:
        super().__init__(daemon=True)
        import psutil

        self.root = psutil.Process(pid)
        self.interval = interval
        self.stop = threading.Event()
        self.root_peak = 0
        self.tree_peak = 0
        self.child_peaks: dict[int, tuple[str, int]] = {}
        self.samples = 0

    def run(self) -> None:
        import psutil

        while not self.stop.is_set():
            try:
                root = self.root.memory_info().rss
                total = root
                for child in self.root.children(recursive=True):
                    try:
                        rss = child.memory_info().rss
                        name = self.child_peaks.get(child.pid, ("", 0))[0] or " ".join(child.cmdline()[1:4])
                    except psutil.Error:
                        continue
                    total += rss
                    self.child_peaks[child.pid] = (name, max(rss, self.child_peaks.get(child.pid, ("", 0))[1]))
            except psutil.Error:
                break  # the root has exited
            self.root_peak = max(self.root_peak, root)
            self.tree_peak = max(self.tree_peak, total)
            self.samples += 1
            self.stop.wait(self.interval)


def ingest(config: Path, prefect_home: Path) -> dict:
    """One ingest in a fresh process; its report and memory."""
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env.update(PREFECT_HOME=str(prefect_home), PYTHONUNBUFFERED="1")
    out, err = config.parent / "stdout.json", config.parent / "stderr.txt"
    started = time.perf_counter()
    with out.open("w") as stdout, err.open("w") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cairn.cli", "ingest", "--config", str(config), "--json"],
            cwd=REPO,
            env=env,
            stdout=stdout,
            stderr=stderr,
        )
        poller = Poller(proc.pid)
        poller.start()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    poller.stop.set()
    poller.join()
    if proc.returncode != 0:
        raise SystemExit(f"ingest failed ({proc.returncode}):\n{err.read_text()[-3000:]}")
    report = json.loads(out.read_text())
    server = [rss for name, rss in poller.child_peaks.values() if "uvicorn" in name or "prefect" in name]
    return {
        "peak_rss_mb": round(usage.ru_maxrss * 1024 / MB, 1),  # Linux: KiB
        "polled_ingest_process_mb": round(poller.root_peak / MB, 1),
        "polled_prefect_server_mb": round(max(server) / MB, 1) if server else None,
        "polled_tree_sum_mb": round(poller.tree_peak / MB, 1),
        "children": sorted({name for name, _ in poller.child_peaks.values()}),
        "child_peaks_mb": {f"{pid} {name}": round(rss / MB, 1) for pid, (name, rss) in poller.child_peaks.items()},
        "samples": poller.samples,
        "seconds": round(seconds, 1),
        "documents": report["documents"],
        "sections": report["sections"],
        "chunks": report["chunks"],
        "rows_written": report["rows_written"],
        "embeddings_computed": report["embeddings_computed"],
        "failures": len(report["failures"]),
    }


def config_for(work: Path, corpus: Path, store: BenchStore) -> Path:
    source = {"name": "openshift", "type": "wiki", "path": str(corpus), "tenant": "bench", "acl": ["all"]}
    path = scratch_config(work, [source], store=store)
    keep_reports_in(path, work / "reports")  # the default ingest (quality check included), its report in scratch
    return path


def summary(runs: list[dict]) -> dict:
    keys = ("peak_rss_mb", "polled_ingest_process_mb", "polled_prefect_server_mb", "polled_tree_sum_mb", "seconds")
    out = {f"median_{k}": median([r[k] for r in runs if r[k] is not None]) for k in keys}
    first = runs[0]
    out.update(
        {k: first[k] for k in ("documents", "sections", "chunks", "rows_written", "embeddings_computed", "failures")}
    )
    out["runs"] = runs
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--scale", type=int, default=10)
    parser.add_argument("--pages", type=int, default=64, help="pages of the base (1x) corpus (a multiple of 32)")
    add_store_arguments(parser)
    args = parser.parse_args()
    shared = require_shared()
    source = shared / "corpora" / CORPUS
    pages = select_pages(source, args.pages)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, bench_store(args) as store:
        tmp = Path(tmp)
        one, many = tmp / "corpus-1x", tmp / f"corpus-{args.scale}x"
        bytes_1x = write_copies(source, pages, one, 1)
        bytes_nx = write_copies(source, pages, many, args.scale)
        prefect_home = tmp / "prefect-home"
        warm = tmp / "warm"
        write_copies(source, pages[:1], warm / "wiki", 1)
        ingest(config_for(warm, warm / "wiki", store), prefect_home)  # creates Prefect's database; not measured
        measured: dict[str, list[dict]] = {"1x": [], f"{args.scale}x": []}
        for run in range(args.runs):  # interleaved, so that load from other work falls on both alike
            for label, corpus in (("1x", one), (f"{args.scale}x", many)):
                work = tmp / f"{label}-{run}"
                work.mkdir()
                result = ingest(config_for(work, corpus, store), prefect_home)
                measured[label].append(result)
                print(
                    f"{label} run {run + 1}: {result['peak_rss_mb']} MB peak, {result['seconds']} s, "
                    f"{result['embeddings_computed']} embeddings",
                    file=sys.stderr,
                )
                shutil.rmtree(work)
    small, large = summary(measured["1x"]), summary(measured[f"{args.scale}x"])
    growth = large["median_peak_rss_mb"] - small["median_peak_rss_mb"]
    extra_docs = large["documents"]["indexed"] - small["documents"]["indexed"]
    results = {
        "corpus": f"{CORPUS}: {len(pages)} of its pages (every ~{len(list(source.rglob('*.md'))) // len(pages)}th "
        f"by sorted path), as copy-01..copy-NN with '(copy k)' appended to each H1",
        "pages": pages,
        "scale": args.scale,
        "store": store.describe(),
        "runs": args.runs,
        "measured": "peak_rss_mb = ru_maxrss (os.wait4) of a fresh `python -m cairn.cli ingest` process: the "
        "largest single process of its tree (the ingest process; Prefect's temporary server is a "
        "child and is polled separately); polled_* = psutil every 0.2 s",
        "bytes": {"1x": bytes_1x, f"{args.scale}x": bytes_nx},
        "1x": small,
        f"{args.scale}x": large,
        "ratio_peak_rss": round(large["median_peak_rss_mb"] / small["median_peak_rss_mb"], 3),
        "ratio_polled_tree_sum": round(large["median_polled_tree_sum_mb"] / small["median_polled_tree_sum_mb"], 3),
        "growth_mb": round(growth, 1),
        "growth_kb_per_extra_document": round(growth * 1024 / extra_docs, 1) if extra_docs else None,
        "embeddings_ratio": round(large["embeddings_computed"] / max(1, small["embeddings_computed"]), 3),
        "goal": "ratio_peak_rss <= 1.2",
        "total_seconds": round(time.perf_counter() - started, 1),
    }
    save("rss", results)


if __name__ == "__main__":
    main()
