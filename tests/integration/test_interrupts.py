"""SIGINT (a terminal's Ctrl-C, sent to the whole process group) and SIGTERM during a real `cairn ingest` in a
subprocess: one line from Cairn, exit 130 or 143, no traceback from it or its quality worker; the next run
completes what the interrupted one left, and the index then matches the sources."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, write_config, write_page

pytestmark = pytest.mark.slow

SENTENCE = "Page {p}: drain the queue of worker {n}, restart it and confirm the lag falls below {n}00 messages. "


def cairn(config: Path, *args: str, **popen) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    return subprocess.Popen(
        [sys.executable, "-m", "cairn.cli", "--config", str(config), *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
        **popen,
    )


def corpus(root: Path, pages: int) -> None:
    for p in range(pages):
        write_page(root, f"page-{p}.md", f"# Page {p}\n\n" + "".join(SENTENCE.format(p=p, n=n) for n in range(40)))


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_ingest_says_one_line_exits_128_plus_the_signal_and_the_next_run_completes(tmp_path, signum):
    corpus(tmp_path / "wiki", 40)
    source = {"name": "wiki", "type": "wiki", "path": str(tmp_path / "wiki"), "tenant": "acme", "acl": ["ops"]}
    config = write_config(tmp_path / "c.toml", tmp_path / "index", [source], quality={"on_ingest": True})
    run = cairn(config, "ingest", start_new_session=True)  # its own process group, as a terminal's foreground job
    deadline = time.monotonic() + 600
    while not (tmp_path / "index" / "embeddings.sqlite").exists():  # the run has opened its index: mid-ingest
        assert run.poll() is None and time.monotonic() < deadline, run.communicate()
        time.sleep(0.2)
    time.sleep(2)
    if signum == signal.SIGINT:
        os.killpg(run.pid, signum)  # what Ctrl-C does: every process of the foreground group gets it
    else:
        os.kill(run.pid, signum)
    out, err = run.communicate(timeout=600)

    assert run.returncode == 128 + signum, err
    assert "Traceback" not in err and "Traceback" not in out
    lines = [line for line in err.splitlines() if line.strip()]
    said = (
        f"cairn: interrupted by {signal.Signals(signum).name}: stopped; the next run completes what "
        "this one left unfinished"
    )
    progress = [line for line in lines if line.startswith("cairn: wiki: ")]  # a run's progress lines (#52)
    assert lines[-1] == said and lines == [*progress, said]
    again = cairn(config, "ingest")
    assert again.wait(timeout=900) == 0, again.communicate()
    check = cairn(config, "reconcile")
    assert check.wait(timeout=600) == 0, check.communicate()
