"""Every example of README.md and docs/*.md runs as printed against the sample index and answers
(tests/docs_examples.py: the blocks, and the excuses of those that cannot run here).

Each page's commands run in a folder holding a copy of data/ and a link to this checkout's .venv, so that
`.venv/bin/cairn` and `data/cairn.toml` mean what they mean at the repository's root, and with a Prefect home of
its own and no PREFECT_API_URL: as on a fresh clone. The README (the first hour: the tour from an empty index,
the query-model export, the library snippet, the service) is the `core` test; the other pages' blocks run in a
slow one, on a copy ingested once; a block identical to a README block (docs/service.md opens with the README's
"Serve it") is run once, by the README's test.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from cairn.flows import prefect_server
from tests.conftest import free_port
from tests.docs_examples import Block, answers, commands, sample_root, to_run

OUTSIDE = ("PREFECT_API_URL", "CAIRN_CONFIG", "CAIRN_MILVUS_URI", "CAIRN_QUERY_MODEL")  # a fresh shell has none


def environment(root: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in OUTSIDE}
    return {**env, "PREFECT_HOME": str(root / "prefect-home")}


def run(block: Block, root: Path, env: dict[str, str]) -> list[subprocess.CompletedProcess]:
    """A block as printed: each bash command on its own (exit 0, and an answer where one is expected), or the
    python block whole (exit 0, something printed)."""
    if block.lang == "python":
        done = subprocess.run(
            [sys.executable, "-c", block.code], cwd=root, env=env, capture_output=True, text=True, timeout=900
        )
        assert done.returncode == 0, (block.name, done.stderr[-3000:])
        assert done.stdout.strip(), (block.name, "printed nothing")
        return [done]
    ran = []
    for command in commands(block.code):
        done = subprocess.run(["bash", "-c", command], cwd=root, env=env, capture_output=True, text=True, timeout=1500)
        assert done.returncode == 0, (block.name, command, done.stderr[-3000:])
        assert answers(command, done.stdout), (block.name, command, done.stdout[-3000:])
        ran.append(done)
    return ran


def serve_it(setup: Block, ask: Block, root: Path, env: dict[str, str]) -> None:
    """A "Serve it" pair as printed (the port aside: a free one, not 8080): the key made and appended to the config,
    the service started in the background, and the curl line answered as the key's principal."""
    port = free_port()
    new_key, serve = commands(setup.code)
    made = subprocess.run(["bash", "-c", new_key], cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert made.returncode == 0 and (root / "demo.key").stat().st_mode & 0o077 == 0, made.stderr
    log = (root / "serve.log").open("w")
    server = subprocess.Popen(
        ["bash", "-c", f"exec {serve.split('  #')[0].strip()} --port {port}"], cwd=root, env=env, stdout=log, stderr=log
    )
    try:
        for _ in range(600):  # a hang guard on a busy machine, not a speed check
            assert server.poll() is None, (root / "serve.log").read_text()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as health:
                    assert health.status == 200
                break
            except OSError:
                time.sleep(0.5)
        if not shutil.which("curl"):
            pytest.skip("curl is not installed: the curl line cannot run as printed")
        (ask_line,) = commands(ask.code)
        asked = subprocess.run(
            ["bash", "-c", ask_line.replace("8080", str(port))], cwd=root, capture_output=True, text=True, timeout=120
        )
        answer = json.loads(asked.stdout)
        assert answer["status"] == "ok" and 0 < len(answer["results"]) <= 3, answer
        assert "ledger-db" in answer["results"][0]["text"].lower() and answer["results"][0]["citation"]
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=120)
        log.close()


def run_page(blocks: list[Block], root: Path, env: dict[str, str]) -> dict[str, list[subprocess.CompletedProcess]]:
    """Every block in order, a "Serve it" pair (the block starting `cairn serve`, then its curl) together; what
    each block's commands printed, by block name."""
    out: dict[str, list[subprocess.CompletedProcess]] = {}
    pending = list(blocks)
    while pending:
        block = pending.pop(0)
        if "cairn serve" in block.code:
            serve_it(block, pending.pop(0), root, env)
        else:
            out[block.name] = run(block, root, env)
    return out


@pytest.mark.core
def test_the_readme_runs_as_printed_from_an_empty_index_and_answers(tmp_path):
    """The first hour on a fresh clone: the README's tour (ingest twice, three questions, as of a past day too,
    status, the data-quality report, a backfill, reconcile), the query-model export, the library snippet and the
    service, each as printed, each answering."""
    root = sample_root(tmp_path)
    env = environment(root)
    try:
        printed = run_page(to_run("README.md"), root, env)
    finally:
        started = prefect_server.stop(Path(env["PREFECT_HOME"]))
    assert not started, "a run with no Prefect API configured started a Prefect server"  # they ran in-process
    tour = next(ran for name, ran in printed.items() if "cairn ingest" in ran[0].args[-1])
    first, again = tour[0].stdout, tour[1].stdout
    assert " 0 failed" in first and " 0 indexed" in again, (first, again)
    printed_then = next(done.stdout for done in tour if "--as-of" in done.args[-1])
    assert "Restart invoice-worker" in printed_then and "updated 2025-01-10" in printed_then, printed_then
    question = ("query", "restart the invoice worker", "--tenant", "acme", "--group", "sre", "--json")
    now, then = (
        json.loads(cairn(root, env, *question, *extra))["results"][0] for extra in ((), ("--as-of", "2025-02-01"))
    )
    assert "drain" in now["text"] and "drain" not in then["text"], then  # the runbook before the March edit
    status = json.loads(cairn(root, env, "status", "--json"))
    assert {r["tenant"] for r in status["rows"]} == {"acme", "globex"}
    library = next(ran[0].stdout for name, ran in printed.items() if "python" in name)
    assert "ledger-db" in library.splitlines()[0] and float(library.split()[0]) > 0, library
    assert (root / "data" / "index" / "cairn.db").exists() and (root / "models" / "query" / "model.onnx").exists()


def cairn(root: Path, env: dict[str, str], *args: str) -> str:
    """A `cairn` command of the test's own (not a docs example), in the page's folder: its stdout."""
    done = subprocess.run([".venv/bin/cairn", *args], cwd=root, env=env, capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def ingested(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    root = sample_root(tmp_path_factory.mktemp("docs"))
    env = environment(root)
    cairn(root, env, "ingest")
    yield root, env
    prefect_server.stop(Path(env["PREFECT_HOME"]))


def test_the_other_pages_examples_run_as_printed_and_answer(ingested):
    root, env = ingested
    readme = {b.code for b in to_run("README.md")}
    blocks = [b for b in to_run("docs/") if b.code not in readme]
    assert blocks  # docs/cli.md's completion line, docs/retrieval.md's adapters at least
    printed = run_page(blocks, root, env)
    assert set(printed) == {b.name for b in blocks}
