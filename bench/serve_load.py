"""Load on `cairn serve`: concurrent HTTP clients against the service, beside retrieve() in this process, one run.

    python -m bench.serve_load [--clients 1,8,32] [--seconds 20] [--rows 100000] [--ingest-pages 400]
                               [--workers 1] [--work DIR]
    python -m bench.serve_load --scrape-storm [--seconds 20] [--rounds 3] [--scrapers 6] [--work DIR]

Two indexes: the sample corpus (data/, ingested by `cairn ingest` into a scratch Lite index) and --rows
synthetic child rows as bench.query_speed writes them (relevance floors off, as there, so every stage runs on
every question; 0 skips it). For each, with `cairn serve` running as a process of its own: one client asking
one question at a time, in this process through retrieve() and then over HTTP, --rounds times in turn (the
headline: HTTP p95 over in-process p95, per round and its median; goal <= 1.2); then, for each client count,
that many clients in threads, each with its own keep-alive connection, asking for --seconds: requests/s,
p50/p95 ms, errors; then the same while `cairn ingest` writes --ingest-pages synthetic wiki pages
(bench.scale_corpus) into that index, in a process of its own. For the synthetic index, the brute-force limit
over as many rows (bench/brute.py) after the service stopped: one client's HTTP p95 over the limit's p95, and the
limit's questions a second beside the service's. The clients run on the same 2 cores as the
service: at 32 clients they take part of the machine. Results: bench/results/serve_load.json
(serve_load_workersN.json with --workers N).

--scrape-storm measures only the scrape-storm row on the sample corpus (bench/serve_scrape_storm.py): a
question's p95 alone and while --scrapers clients loop on `GET /metrics`, the feedback store at its bound (goal
<= 1.1). Results: bench/results/serve_load_scrape_storm.json.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import random
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.common import REPO, cairn_command, median, percentile, save
from bench.scale_corpus import write_corpus

SAMPLE_QUESTIONS = [
    "how do I fail over the ledger-db primary",
    "TLS certificate expired on the edge proxy",
    "kafka consumer lag on the events cluster",
    "rotate a leaked CI deploy token",
    "payments api high error rate what to check",
    "vault is sealed after a restart how to unseal",
    "dns resolution failures inside the cluster",
    "restart the auth gateway safely",
]
WARM_UP = 5


def serve_section(key: str, tenant: str, groups: list[str]) -> str:
    digest = hashlib.sha256(key.encode()).hexdigest()
    return (
        f'[serve]\nrate_per_minute = 0\n[[serve.principals]]\nname = "bench"\nkey_sha256 = "{digest}"\n'
        f"tenant = {json.dumps(tenant)}\ngroups = {json.dumps(groups)}\n"
    )


def load_source(work: Path) -> str:
    """A wiki source the 'with an ingest running' rounds fill; one page in it from the start."""
    folder = work / "load-pages"
    write_corpus(folder, 7, 1)
    return (
        f'[[sources]]\nname = "load"\ntype = "wiki"\npath = {json.dumps(str(folder))}\ntenant = "acme"\nacl = ["sre"]\n'
    )


def sample_config(work: Path, key: str) -> Path:
    """data/cairn.toml with its index, cursors and reports in `work` (its paths are read against its folder: the
    sample sources by absolute path, the index in `work/index`), the load source and a bench key."""
    text = (REPO / "data" / "cairn.toml").read_text()
    for name in ("path", "repo"):  # the sample's sources, relative to data/
        text = re.sub(rf'^{name} = "(?!/)', f'{name} = "{REPO}/data/', text, flags=re.M)
    text = text.replace('report_dir = "reports"', f'report_dir = "{work}/reports"')
    path = work / "cairn.toml"
    path.write_text(text + "\n" + load_source(work) + serve_section(key, "acme", ["sre"]))
    return path


def synthetic_config(work: Path, key: str, rows: int) -> Path:
    """bench.query_speed's synthetic rows in a Lite index of `work` (floors off), the load source, a bench key."""
    from bench.query_speed import write_rows
    from cairn.schemas.config import load_config

    path = work / "cairn.toml"
    path.write_text(
        f"state_path = {json.dumps(str(work / 'index' / 'state.sqlite'))}\n[milvus]\n"
        f'uri = {json.dumps(str(work / "index" / "cairn.db"))}\ncollection = "speed"\n[embedding]\n'
        f"cache_path = {json.dumps(str(work / 'index' / 'embeddings.sqlite'))}\n"
        f"[quality]\nreport_dir = {json.dumps(str(work / 'reports'))}\n[query]\nsteps = {{ floors = false }}\n"
        + load_source(work)
        + serve_section(key, "acme", ["sre", "security"])
    )
    write_rows(load_config(path).milvus, rows)
    return path


def synthetic_questions(count: int) -> list[str]:
    from bench.query_speed import VOCAB

    pick = random.Random(3)
    return [f"{pick.choice(VOCAB)} {pick.choice(VOCAB)} {pick.choice(VOCAB)} on the primary" for _ in range(count)]


def in_process(config: Path, questions: list[str], seconds: float) -> dict:
    """retrieve() one question at a time in this process, for `seconds` after a warm-up: the baseline."""
    from cairn.query import Principal, Retriever
    from cairn.schemas.config import load_config

    loaded = load_config(config)
    principal = loaded.serve.principals[0]
    who = Principal(principal.tenant, principal.groups)
    retriever = Retriever.from_config(loaded)
    try:
        for q in questions[:WARM_UP]:
            retriever.retrieve(q, who)
        times, n, ends, began = [], 0, time.monotonic() + seconds, time.perf_counter()
        while time.monotonic() < ends:
            started = time.perf_counter()
            retriever.retrieve(questions[n % len(questions)], who)
            times.append((time.perf_counter() - started) * 1000)
            n += 1
        elapsed = time.perf_counter() - began
    finally:
        retriever.close()
    return figures(times, 0, elapsed)


def figures(times: list[float], errors: int, seconds: float) -> dict:
    return {
        "requests": len(times),
        "errors": errors,
        "requests_per_s": round(len(times) / seconds, 2),  # answered (200) per second of the whole time
        "p50_ms": round(percentile(times, 0.5), 1),
        "p95_ms": round(percentile(times, 0.95), 1),
    }


class Service:
    """`cairn serve` in a process of its own, and clients that keep it busy."""

    def __init__(self, config: Path, key: str, workers: int) -> None:
        with socket.socket() as probe:  # a free port of 127.0.0.1
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.key = key
        self.log = config.with_name(f"serve-{self.port}.log").open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cairn.cli", "serve", "--config", str(config), "--port", str(self.port)]
            + ["--workers", str(workers)],
            cwd=REPO,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if self.ask("GET", "/healthz")[0] == 200:
                    break
            except OSError:
                time.sleep(0.5)
        else:
            raise SystemExit(f"cairn serve never became healthy: see {self.log.name}")

    def warm_up(self, questions: list[str]) -> None:
        """WARM_UP questions, one at a time, before anything is measured."""
        for q in questions[:WARM_UP]:
            self.ask("POST", "/v1/retrieve", {"query": q})

    def ask(self, method: str, path: str, body: dict | None = None, conn=None) -> tuple[int, bytes]:
        own = conn is None
        conn = conn or http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        headers = {"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"}
        conn.request(method, path, json.dumps(body) if body is not None else None, headers)
        response = conn.getresponse()
        status, data = response.status, response.read()
        if own:
            conn.close()
        return status, data

    def load(self, clients: int, questions: list[str], seconds: float) -> dict:
        """`clients` threads asking in turn until `seconds` have passed (the questions asked by then finish):
        requests/s over the whole time, first question to last answer, so long answers are not flattered."""
        times: list[float] = []
        errors = [0]
        lock, start = threading.Lock(), threading.Barrier(clients + 1)

        def client(index: int) -> None:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            start.wait()
            n, ends = index, time.monotonic() + seconds
            while time.monotonic() < ends:
                began = time.perf_counter()
                try:
                    status, _ = self.ask("POST", "/v1/retrieve", {"query": questions[n % len(questions)]}, conn)
                except (OSError, http.client.HTTPException):
                    status = 0
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
                took = (time.perf_counter() - began) * 1000
                with lock:
                    if status == 200:
                        times.append(took)
                    else:
                        errors[0] += 1
                n += clients
            conn.close()

        threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
        for t in threads:
            t.start()
        start.wait()
        began = time.perf_counter()
        for t in threads:
            t.join()
        return {"clients": clients, **figures(times, errors[0], time.perf_counter() - began)}

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=120)
        self.log.close()


def paired(service: Service, config: Path, questions: list[str], args: argparse.Namespace) -> dict:
    """One client in this process, then over HTTP, `--rounds` times in turn: the ratio of the two p95s per round
    (noise hits both sides of a round alike) and its median."""
    rounds = []
    for _ in range(args.rounds):
        local = in_process(config, questions, args.seconds)
        remote = service.load(1, questions, args.seconds)
        rounds.append({"in_process": local, "http": remote, "p95_ratio": round(remote["p95_ms"] / local["p95_ms"], 3)})
    return {"rounds": rounds, "median_p95_ratio": round(median([r["p95_ratio"] for r in rounds]), 3)}


def measure(name: str, config: Path, key: str, questions: list[str], args: argparse.Namespace) -> dict:
    service = Service(config, key, args.workers)
    try:
        service.warm_up(questions)
        one_client = paired(service, config, questions, args)
        print(f"{name}: one client, in process vs HTTP {one_client}", file=sys.stderr)
        quiet = [service.load(n, questions, args.seconds) for n in args.clients]
        print(f"{name}: {quiet}", file=sys.stderr)
        write_corpus(config.parent / "load-pages", 7, args.ingest_pages)
        ingested: list = []
        command = ["ingest", "--config", str(config), "--source", "load", "--json"]
        home = config.parent / "prefect-home"
        ingest = threading.Thread(target=lambda: ingested.append(cairn_command(command, home)))
        began = time.monotonic()
        ingest.start()
        time.sleep(min(10.0, args.seconds))  # past the run's start (Prefect, the ledger read), into its embedding
        busy = [service.load(n, questions, args.seconds) for n in args.clients]
        busy_until = time.monotonic() - began
        ingest.join()
    finally:
        service.stop()
    run = ingested[0] if ingested else None
    try:  # a run whose sources failed (exit 2) still prints its report, with why in `failed_sources`
        report = json.loads(run.stdout) if run else {}
    except ValueError:
        report = {}
    return {
        "one_client": one_client,
        "http": quiet,
        "http_while_ingesting": busy,
        "ingest": {
            "pages": args.ingest_pages,
            "exit_code": run.exit_code if run else None,
            "seconds": round(run.seconds, 1) if run else None,
            "embeddings_computed": report.get("embeddings_computed"),
            "overlapped_seconds": round(min(busy_until, run.seconds if run else 0.0), 1),
            # a run that did not finish says why (its last lines): the rounds beside it are not "beside an ingest"
            "stderr_tail": run.stderr.strip().splitlines()[-3:] if run and run.exit_code not in (0, 1) else [],
            "failed_sources": report.get("failed_sources") or [],
        },
    }


def against_the_limit(synthetic: dict, rows: int, questions: int = 40) -> dict:
    """The brute-force limit over as many rows as the synthetic index holds (children and parents, bench/brute.py),
    measured after the service stopped, beside what the service did: one client's HTTP p95 over the limit's p95
    (issue #52: within 10x), and the questions a second the limit answers one at a time, beside the service's."""
    from bench.brute import BruteForce
    from bench.query_speed import CHILDREN

    limit = BruteForce(rows + rows // CHILDREN)
    times = [limit.question() for _ in range(questions)]
    p50, p95 = percentile(times, 0.5), percentile(times, 0.95)
    http_p95 = median([r["http"]["p95_ms"] for r in synthetic["one_client"]["rounds"]])
    served = {str(level["clients"]): level["requests_per_s"] for level in synthetic["http"]}
    return {
        "rows": rows + rows // CHILDREN,
        "p50_ms": round(p50, 1),
        "p95_ms": round(p95, 1),
        "questions_per_s_one_at_a_time": round(1000 / p50, 1) if p50 > 0 else None,
        "http_one_client_p95_over_limit_p95": round(http_p95 / p95, 1) if p95 > 0 else None,
        "served_per_s_by_clients": served,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", default="1,8,32", help="client counts, comma-separated")
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds of load per client count")
    parser.add_argument("--rounds", type=int, default=3, help="one-client rounds, in process then over HTTP")
    parser.add_argument("--rows", type=int, default=100_000, help="child rows of the synthetic index (0: skip it)")
    parser.add_argument("--ingest-pages", type=int, default=400, help="pages the concurrent ingest writes")
    parser.add_argument("--workers", type=int, default=1, help="`cairn serve --workers`")
    parser.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temporary one)")
    parser.add_argument("--scrape-storm", action="store_true", help="only the scrape-storm row (sample corpus)")
    parser.add_argument("--scrapers", type=int, default=6, help="--scrape-storm: clients looping on /metrics")
    args = parser.parse_args()
    args.clients = [int(n) for n in args.clients.split(",")]
    work = args.work or Path(tempfile.mkdtemp(prefix="cairn-serve-load-"))
    key = secrets.token_urlsafe(24)
    results: dict = {"clients": args.clients, "seconds_per_level": args.seconds, "workers": args.workers}
    sample = work / "sample"
    sample.mkdir(parents=True, exist_ok=True)
    config = sample_config(sample, key)
    first = cairn_command(["ingest", "--config", str(config), "--json"], sample / "prefect-home")
    if first.exit_code != 0:
        raise SystemExit(f"the sample ingest exited {first.exit_code}:\n{first.stderr[-3000:]}")
    if args.scrape_storm:
        from bench.serve_scrape_storm import scrape_storm

        results = {"seconds_per_level": args.seconds, "scrape_storm": scrape_storm(config, key, args)}
        results["measured_at"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        save("serve_load_scrape_storm", results)
        return
    results["sample"] = measure("sample", config, key, SAMPLE_QUESTIONS, args)
    if args.rows:
        synthetic = work / f"rows-{args.rows}"
        synthetic.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        config = synthetic_config(synthetic, key, args.rows)
        results["synthetic"] = {"rows": args.rows, "insert_seconds": round(time.perf_counter() - started, 1)}
        results["synthetic"].update(measure("synthetic", config, key, synthetic_questions(256), args))
        results["synthetic"]["limit"] = against_the_limit(results["synthetic"], args.rows)
        print(f"synthetic: against the brute-force limit {results['synthetic']['limit']}", file=sys.stderr)
    results["measured_at"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    save("serve_load" if args.workers == 1 else f"serve_load_workers{args.workers}", results)


if __name__ == "__main__":
    main()
