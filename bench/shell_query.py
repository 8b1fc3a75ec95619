"""A question from the shell (#52): `cairn query` as whole processes, each timed by /usr/bin/time.

    python -m bench.shell_query                        # the README's question, 10 runs after a warm-up
    python -m bench.shell_query --runs 10 -- query "restart the invoice worker" --tenant acme --group sre
    python -m bench.shell_query -- query "how do I fail over the ledger-db primary" --url URL --key-file KEY

Prints each run's wall and CPU seconds (user + sys, which a loaded machine inflates less than wall time), their
medians, the load average before and after (the machine is shared: a median is only idle when the load says so)
and whether every run printed the same answer. The index server, the model's cached graph and the bytecode are
warmed by the first run, which is not counted. Goal (#52): <= 1.5 s median wall, idle.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import REPO

QUESTION = ["query", "how do I fail over the ledger-db primary", "--tenant", "acme", "--group", "sre", "--k", "3"]
TIME = "/usr/bin/time"
FORMAT = "%e %U %S"  # wall, user, sys seconds


def parse_time(text: str) -> tuple[float, float]:
    """(wall, CPU) seconds from /usr/bin/time's FORMAT line, the last line of `text` (what the command itself
    wrote to stderr comes first)."""
    wall, user, system = (float(x) for x in text.strip().splitlines()[-1].split())
    return wall, user + system


def summary(runs: list[tuple[float, float]]) -> dict[str, float]:
    return {
        "median_wall": statistics.median(w for w, _ in runs),
        "median_cpu": statistics.median(c for _, c in runs),
        "runs": len(runs),
    }


def run_once(args: list[str]) -> tuple[float, float, str, int]:
    """One whole `cairn` process: (wall, CPU, its stdout, its exit code)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as timing:
        done = subprocess.run(
            [TIME, "-f", FORMAT, "-o", timing.name, sys.executable, "-m", "cairn.cli", *args],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=600,
        )
        wall, cpu = parse_time(Path(timing.name).read_text())
    return wall, cpu, done.stdout, done.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("args", nargs="*", help="the cairn command line (default: the README's question)")
    options = parser.parse_args(argv)
    if not os.access(TIME, os.X_OK):
        print(f"{TIME} is needed (GNU time)", file=sys.stderr)
        return 2
    args = options.args or QUESTION
    *_, first, code = run_once(args)  # warm-up: the index server, the cached graph, bytecode
    if code != 0:
        print(f"cairn {' '.join(args)} exited {code}: nothing to time", file=sys.stderr)
        return 1
    before = os.getloadavg()
    runs, same = [], True
    for number in range(1, options.runs + 1):
        wall, cpu, out, _ = run_once(args)
        same = same and out == first
        runs.append((wall, cpu))
        print(f"run {number}: wall {wall:.2f} s, cpu {cpu:.2f} s", flush=True)
    after = os.getloadavg()
    result = summary(runs)
    print(
        f"median of {result['runs']}: wall {result['median_wall']:.2f} s, cpu {result['median_cpu']:.2f} s; "
        f"load {before[0]:.1f} -> {after[0]:.1f}; every answer the same: {same}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
