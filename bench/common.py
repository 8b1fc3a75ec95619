"""Shared by the benchmarks: scratch configs, where their collections live, the shared corpora, medians."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from cairn.embedding.model import DEFAULT_MODEL  # the configuration's default model

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
MB = 1024 * 1024
RESULTS = Path(os.environ.get("CAIRN_BENCH_RESULTS") or REPO / "bench" / "results")  # tests point it elsewhere


def require_shared() -> Path:
    if not (SHARED / "corpora").is_dir():
        print("../shared/corpora is absent: nothing to measure", file=sys.stderr)
        sys.exit(0)
    return SHARED


@dataclass
class BenchStore:
    """Where a benchmark's collections live.

    lite (the default): a Milvus Lite file in the benchmark's scratch folder, deleted with it.
    server (`--store server --uri http://host:19530`, token from $CAIRN_MILVUS_TOKEN): a running Milvus,
    2.5 or later (the collection's BM25 function). Every collection a benchmark makes there gets a name of
    its own, bench_<purpose>_<pid>_<n>, and is dropped when the benchmark ends (bench_store below).
    """

    kind: str = "lite"
    uri: str = ""
    created: list[str] = field(default_factory=list)

    def place(self, workdir: Path, collection: str) -> tuple[str, str]:
        """(uri, collection name) for one scratch collection of a benchmark working in `workdir`."""
        if self.kind == "lite":
            return str(workdir / "index" / "cairn.db"), collection
        name = f"bench_{collection}_{os.getpid()}_{len(self.created)}"
        self.created.append(name)
        return self.uri, name

    def milvus_config(self, workdir: Path, collection: str):
        from cairn.schemas.config import MilvusConfig

        uri, name = self.place(workdir, collection)
        return MilvusConfig(uri=uri, collection=name)

    def describe(self) -> dict:
        return {"kind": self.kind, "uri": self.uri or None}


LITE = BenchStore()


def add_store_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        choices=["lite", "server"],
        default="lite",
        help="lite: a Milvus Lite file in scratch (default); server: the Milvus at --uri",
    )
    parser.add_argument(
        "--uri",
        default=os.environ.get("CAIRN_MILVUS_URI") or "http://127.0.0.1:19530",
        help="the Milvus server of --store server (default $CAIRN_MILVUS_URI, else %(default)s)",
    )


@contextlib.contextmanager
def bench_store(args: argparse.Namespace) -> Iterator[BenchStore]:
    """The store the arguments name. A server is checked reachable first (exit 2 with the reason if not),
    and the collections the benchmark made on it are dropped at the end, whatever happened. Lite ignores
    $CAIRN_MILVUS_URI (it would redirect the scratch configs to a server)."""
    from cairn.errors import StoreError
    from cairn.index.milvus import Connection
    from cairn.schemas.config import MilvusConfig

    if args.store == "lite":
        os.environ.pop("CAIRN_MILVUS_URI", None)
        yield LITE
        return
    os.environ["CAIRN_MILVUS_URI"] = args.uri  # what load_config of each scratch config will use anyway
    try:
        connection = Connection.open(MilvusConfig(uri=args.uri), create=False)
        client = connection.client
        client.list_collections()
    except StoreError as exc:
        print(f"--store server: {exc}", file=sys.stderr)
        sys.exit(2)
    store = BenchStore("server", args.uri)
    try:
        yield store
    finally:
        for name in store.created:
            if client.has_collection(name):
                client.drop_collection(name)
        connection.close()


def scratch_config(
    workdir: Path,
    sources: list[dict],
    collection: str = "bench",
    backend: str = "auto",
    store: BenchStore = LITE,
    model: str = DEFAULT_MODEL,
) -> Path:
    uri, name = store.place(workdir, collection)
    lines = [
        f"state_path = {json.dumps(str(workdir / 'index' / 'state.sqlite'))}",
        "[milvus]",
        f"uri = {json.dumps(uri)}",
        f"collection = {json.dumps(name)}",
        "[embedding]",
        f"cache_path = {json.dumps(str(workdir / 'index' / 'embeddings.sqlite'))}",
        f"model = {json.dumps(model)}",
        f"backend = {json.dumps(backend)}",
    ]
    for source in sources:
        lines.append("[[sources]]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in source.items()]
    path = workdir / "cairn.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def keep_reports_in(config_path: Path, folder: Path) -> None:
    """Point a scratch config's data-quality reports (each ingest's, and `cairn report`'s) into `folder`."""
    with config_path.open("a") as handle:
        handle.write(f"[quality]\nreport_dir = {json.dumps(str(folder))}\n")


@dataclass(frozen=True)
class CommandRun:
    """One `cairn` command run in a process of its own: how it ended, what it printed, its wall time."""

    exit_code: int
    stdout: str
    stderr: str
    seconds: float

    def json(self) -> dict:
        """Its --json output; SystemExit with the end of its stderr when it printed none."""
        try:
            return json.loads(self.stdout)
        except ValueError:
            raise SystemExit(f"cairn exited {self.exit_code} without JSON on stdout:\n{self.stderr[-3000:]}") from None


def cairn_command(args: list[str], prefect_home: Path) -> CommandRun:
    """`python -m cairn.cli ARGS` in a fresh process, as a shell or cron runs it: no PREFECT_API_URL (a flow run
    reports to the local Prefect server, flows/prefect_server.py), Prefect's home and database in `prefect_home`."""
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env.update(PREFECT_HOME=str(prefect_home), PYTHONUNBUFFERED="1")
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "cairn.cli", *args], cwd=REPO, env=env, capture_output=True, text=True, check=False
    )
    return CommandRun(done.returncode, done.stdout, done.stderr, time.perf_counter() - started)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def percentile(values: list[float], fraction: float) -> float:
    """The value at `fraction` of the sorted values (nearest rank, no interpolation: p95 of 20 is the 20th)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))] if ordered else float("nan")


def save(name: str, data: dict, echo: bool = True) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(data, indent=2) + "\n")
    if echo:
        print(json.dumps(data, indent=2))
    print(f"written to {path}", file=sys.stderr)
    return path


def peak_rss_mb(pid: int | None) -> float | None:
    """A running process's peak resident memory so far (Linux VmHWM), in MB; None when it cannot be read."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (OSError, TypeError):
        return None
    kib = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")), None)
    return round(kib / 1024, 1) if kib is not None else None


def disk_mb(folder: Path) -> float:
    """The disk space the files under `folder` take (allocated blocks, not apparent sizes), in MB."""
    return round(sum(p.stat().st_blocks * 512 for p in folder.rglob("*") if p.is_file()) / MB, 1)
