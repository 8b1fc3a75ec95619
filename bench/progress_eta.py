"""Whether a first ingest's time estimate holds: `cairn ingest --json` of a synthetic wiki, its progress lines read
as they come.

    python -m bench.progress_eta [--pages 6000] [--runs 1] [--work DIR]

A first ingest of bench.scale's synthetic wiki (--pages pages; the real model) in a process of its own, as cron
runs it: its stderr carries a line when the source's plan is known (`0/N documents to index`), then every 15 s the
texts embedded with the rate and the time left (flows/progress.py Lines), and a line when the source is through
(`N/N documents`). Each line is stamped when it arrives. For every estimate made after the first 10% of the
source's time (from its plan to its last line), the finish it predicts (now + time left) against the finish
observed, as a share of the source's whole time: the goal is every such estimate within 25%. Also printed: the
first line's delay after the process started, and the share of the remaining time each estimate missed by (the
stricter reading; near the end a second is a large share). The machine's load average before and after: a run
whose speed changes under other work cannot be predicted from its past, so read the figure beside the load.
Results: bench/results/progress_eta.json.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.common import REPO, median, save, scratch_config
from bench.scale_corpus import SOURCE, write_corpus

PLAN = re.compile(r"cairn: (?P<source>[^:]+): 0/(?P<total>\d+) documents to index")
TEXTS = re.compile(
    r"cairn: (?P<source>[^:]+): (?P<done>\d+) of about (?P<expected>\d+) texts embedded "
    r".*?(?:about (?P<left>\d+) s left)?\)$"
)
THROUGH = re.compile(r"cairn: (?P<source>[^:]+): (?P<done>\d+)/(?P<total>\d+) documents \(")
GOAL = 0.25


def stamped_lines(args: list[str], env: dict[str, str]) -> tuple[list[tuple[float, str]], int, float]:
    """Run `python -m cairn.cli ARGS`; its stderr lines with the seconds since it started, its exit code, its wall."""
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "cairn.cli", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[tuple[float, str]] = []

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append((time.monotonic() - started, line.rstrip("\n")))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    code = process.wait()
    reader.join(timeout=10)
    return lines, code, time.monotonic() - started


def judge(lines: list[tuple[float, str]]) -> dict:
    """The estimates of the run's one source against when it was through."""
    plan = next((t for t, line in lines if PLAN.search(line)), None)
    through = [t for t, line in lines if (m := THROUGH.search(line)) and m["done"] == m["total"]]
    estimates = [(t, int(m["left"])) for t, line in lines if (m := TEXTS.search(line)) and m["left"] is not None]
    if plan is None or not through:
        raise SystemExit("the run printed no plan line or no line for its end: nothing to judge")
    end = through[-1]
    whole = end - plan
    judged = [(t, left) for t, left in estimates if t - plan >= 0.1 * whole]
    total_errors = [abs(t + left - end) / whole for t, left in judged]
    left_errors = [abs(t + left - end) / (end - t) for t, left in judged if end > t]
    return {
        "first_line_seconds": round(lines[0][0], 1) if lines else None,
        "plan_seconds": round(plan, 1),
        "source_seconds": round(whole, 1),
        "estimates": len(estimates),
        "estimates_after_10pct": len(judged),
        "worst_error_of_whole": round(max(total_errors), 3) if total_errors else None,
        "median_error_of_whole": round(median(total_errors), 3) if total_errors else None,
        "worst_error_of_remaining": round(max(left_errors), 3) if left_errors else None,
        "within_goal": bool(total_errors) and max(total_errors) <= GOAL,
        "lines": [[round(t, 1), line] for t, line in lines if PLAN.search(line) or TEXTS.search(line)][:60],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=6000)
    parser.add_argument("--runs", type=int, default=1, help="first ingests, each of a fresh index")
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory(prefix="cairn-eta-", dir=args.work) as scratch:
        work = Path(scratch)
        corpus = work / "wiki"
        write_corpus(corpus, args.seed, args.pages)
        env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
        env.update(PREFECT_HOME=str(work / "prefect"), PYTHONUNBUFFERED="1")
        for run in range(args.runs):
            folder = work / f"run{run}"
            folder.mkdir()
            config = scratch_config(folder, [{**SOURCE, "path": str(corpus)}])
            load_before = os.getloadavg()
            lines, code, wall = stamped_lines(["ingest", "--config", str(config), "--json"], env)
            if code != 0:
                raise SystemExit(f"cairn ingest exited {code}:\n" + "\n".join(line for _, line in lines[-20:]))
            result = judge(lines)
            result.update(
                wall_seconds=round(wall, 1),
                loadavg_before=[round(x, 2) for x in load_before],
                loadavg_after=[round(x, 2) for x in os.getloadavg()],
            )
            runs.append(result)
            if not result["estimates_after_10pct"]:
                print(f"run {run + 1}: no estimate after the first 10% (a run shorter than two lines)", flush=True)
                continue
            print(
                f"run {run + 1}: {args.pages} pages, first line after {result['first_line_seconds']} s, source "
                f"{result['source_seconds']} s; {result['estimates_after_10pct']} estimates after its first 10%, "
                f"worst {result['worst_error_of_whole']:.0%} of the whole (median {result['median_error_of_whole']:.0%}"
                f", worst {result['worst_error_of_remaining']:.0%} of the time remaining); load "
                f"{result['loadavg_before'][0]} -> {result['loadavg_after'][0]}",
                flush=True,
            )
    save("progress_eta", {"pages": args.pages, "goal": GOAL, "runs": runs})


if __name__ == "__main__":
    main()
