"""End to end through the `cairn` command, in subprocesses, as a user runs it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, write_config
from tests.integration import corpus

SERVER: dict[str, str] = {}  # PREFECT_API_URL of the session's test server, once a test asked for it


@pytest.fixture
def shared_server(prefect_server):
    """Subprocesses report to the session's Prefect server instead of each starting a temporary one (seconds
    per call). The README demo test does not use it: it runs `cairn` exactly as a fresh machine does."""
    from prefect.settings import PREFECT_API_URL

    SERVER["PREFECT_API_URL"] = str(PREFECT_API_URL.value())
    yield
    SERVER.clear()


def recorded_flow_run(home, run_id: str) -> dict:
    """The flow run `run_id` as the local Prefect server of `home` (flows/prefect_server.py) keeps it."""
    import urllib.request

    url = json.loads((home / "cairn-prefect.server").read_text())["url"]
    with urllib.request.urlopen(f"{url}/flow_runs/{run_id}", timeout=60) as response:
        return json.loads(response.read())


def cairn(*args, cwd=REPO, env=None):
    return subprocess.run(
        [sys.executable, "-m", "cairn.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=1500,  # a hang guard, not a speed limit: a busy machine is slow
        env={**os.environ, **SERVER, **(env or {})},
    )


def python_blocks(path: Path) -> list[str]:
    """The ```python code blocks of a Markdown page, as printed."""
    return re.findall(r"^```python\n(.*?)^```$", path.read_text(encoding="utf-8"), flags=re.S | re.M)


def test_failed_documents_exit_1_and_a_failed_source_exits_2_after_the_others_ran(tmp_path, shared_server):
    corpus.build(tmp_path / "wiki")
    (tmp_path / "wiki" / "acme" / "binary.md").write_bytes(b"\x00\x01\x02")
    config = write_config(
        tmp_path / "c.toml",
        tmp_path / "index",
        [
            {
                "name": "w",
                "type": "wiki",
                "path": str(tmp_path / "wiki" / "acme"),
                "tenant": "acme",
                "acl": ["sre"],
                "acl_ceiling": corpus.ACME_GROUPS,
            },
        ],
    )
    partial = cairn("ingest", "--config", str(config))
    assert partial.returncode == 1, partial.stderr
    assert "3 indexed" in partial.stdout and "1 failed" in partial.stdout
    assert "binary.md" in partial.stderr and "binary file" in partial.stderr
    strict = cairn("ingest", "--config", str(config), "--strict")  # deprecated, accepted, the same
    assert strict.returncode == 1 and "binary.md" in strict.stderr

    (tmp_path / "wiki" / "acme" / "binary.md").unlink()
    two = write_config(
        tmp_path / "two.toml",
        tmp_path / "index",
        [
            {
                "name": "gone",
                "type": "wiki",
                "path": str(tmp_path / "no-such-folder"),
                "tenant": "acme",
                "acl": ["sre"],
            },
            {
                "name": "w",
                "type": "wiki",
                "path": str(tmp_path / "wiki" / "acme"),
                "tenant": "acme",
                "acl": ["sre"],
                "acl_ceiling": corpus.ACME_GROUPS,
            },
        ],
    )
    down = cairn("ingest", "--config", str(two), "--json")
    assert down.returncode == 2, down.stderr
    assert "Traceback" not in down.stderr  # not Prefect's tracebacks of the task and the flow run: the JSON says it
    report = json.loads(down.stdout)
    assert "does not exist" in report["per_source"]["gone"]["error"]
    assert report["failed_sources"] == ["gone"] and report["per_source"]["gone"]["status"] == "failed"
    assert report["per_source"]["w"]["status"] == "ok" and report["documents"]["unchanged"] == 3


def test_config_error_fails_fast_with_what_to_fix(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[sources]]\nname = "x"\ntype = "ftp"\ntenant = "t"\n')
    result = cairn("ingest", "--config", str(bad))
    assert result.returncode == 2
    assert "config error" in result.stderr and "sources.0.type" in result.stderr
    missing = cairn("query", "x", "--tenant", "t", "--group", "g", "--config", str(tmp_path / "none.toml"))
    assert missing.returncode == 2 and "not found" in missing.stderr


def test_query_before_ingest_says_to_ingest(tmp_path):
    config = write_config(tmp_path / "c.toml", tmp_path / "index", [])
    result = cairn("query", "anything", "--tenant", "t", "--group", "g", "--config", str(config))
    assert result.returncode == 2 and "run `cairn ingest` first" in result.stderr


def test_reconcile_reports_drift_fix_repairs_it_and_backfill_is_idempotent(tmp_path, shared_server):
    from cairn.index.store import MilvusStore
    from cairn.schemas.config import load_config

    corpus.build(tmp_path / "wiki")
    config = write_config(
        tmp_path / "c.toml",
        tmp_path / "index",
        [
            {
                "name": "w",
                "type": "wiki",
                "path": str(tmp_path / "wiki" / "acme"),
                "tenant": "acme",
                "acl": ["sre"],
                "acl_ceiling": corpus.ACME_GROUPS,
            },
        ],
    )
    assert cairn("ingest", "--config", str(config)).returncode == 0
    store = MilvusStore(load_config(config).milvus, dim=384)
    store.load()
    victim = next(store.iterate('chunk_type == "child"', ["chunk_id"])).chunk_id
    store.delete_chunks([victim])
    store.close()  # releases the Lite file for the subprocesses

    found = cairn("reconcile", "--json", "--config", str(config))
    assert found.returncode == 1, found.stderr
    drift = json.loads(found.stdout)
    assert drift["clean"] is False and list(drift["sources"][0]["incomplete"].values()) == [["1 child rows missing"]]

    fixed = cairn("reconcile", "--fix", "--json", "--config", str(config))
    assert fixed.returncode == 0, fixed.stderr
    assert json.loads(fixed.stdout)["after_fix"][0]["clean"] is True

    backfill = cairn("backfill", "--source", "w", "--full", "--json", "--config", str(config))
    assert backfill.returncode == 0, backfill.stderr
    report = json.loads(backfill.stdout)
    assert report["documents"]["indexed"] == 3 and report["embeddings_computed"] == 0


def test_unreachable_server_fails_fast_and_never_prints_the_token(tmp_path):
    config = write_config(tmp_path / "c.toml", tmp_path / "index", [])
    secret = "s3cr3t-milvus-token-do-not-print"
    result = cairn(
        "ingest", "--config", str(config), env={"CAIRN_MILVUS_URI": "http://127.0.0.1:9", "CAIRN_MILVUS_TOKEN": secret}
    )
    assert result.returncode == 2 and "cannot reach Milvus at http://127.0.0.1:9" in result.stderr
    assert secret not in result.stdout + result.stderr


@pytest.mark.corpus
def test_a_real_hugo_wiki_exits_0_on_every_run_its_section_pages_skipped(tmp_path, shared_corpora, shared_server):
    """prometheus-operator's runbooks: ten front-matter-only pages (Hugo's `_index.md`, an archetype) are skipped
    with their reason, not failed, so a cron job alerting on the exit code is quiet; a re-run does not read them."""
    wiki = shared_corpora / "wiki" / "prometheus-operator-runbooks"
    source = {"name": "po", "type": "wiki", "path": str(wiki), "tenant": "acme", "acl": ["sre"]}
    config = write_config(tmp_path / "c.toml", tmp_path / "index", [source])
    first = cairn("ingest", "--config", str(config), "--json")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    d = report["documents"]
    assert d["failed"] == 0 and d["skipped"] >= 10 and d["seen"] == d["indexed"] + d["skipped"], report["failures"]
    skipped = {s["document"]: s for s in report["skipped"]}
    assert (
        "content/runbooks/_index.md" in skipped
        and "front matter only" in skipped["content/runbooks/_index.md"]["reason"]
    )
    again = cairn("ingest", "--config", str(config), "--json")
    assert again.returncode == 0, again.stderr
    rerun = json.loads(again.stdout)
    assert rerun["documents"]["skipped"] == d["skipped"] and rerun["documents"]["indexed"] == 0
    assert not any(s["read"] for s in rerun["skipped"])  # remembered by version: not read again


def test_the_terminal_shows_cairns_lines_only_and_names_a_missing_folder_by_its_absolute_path(tmp_path, shared_server):
    """A source folder written relative to the config that does not exist: one line naming it absolutely, no
    Prefect log line or traceback above it (they come back with --verbose)."""
    (tmp_path / "conf").mkdir()
    corpus.build(tmp_path / "conf" / "wiki")
    sources = [
        {"name": "gone", "type": "wiki", "path": "no-such-folder", "tenant": "acme", "acl": ["sre"]},
        {
            "name": "w",
            "type": "wiki",
            "path": "wiki/acme",
            "tenant": "acme",
            "acl": ["sre"],
            "acl_ceiling": corpus.ACME_GROUPS,
        },
    ]
    config = write_config(tmp_path / "conf" / "c.toml", tmp_path / "index", sources)
    run = cairn("ingest", "--config", str(config), cwd=tmp_path)  # the working directory is not the config's
    assert run.returncode == 2, run.stderr
    missing = tmp_path / "conf" / "no-such-folder"
    assert run.stderr.splitlines()[-1] == f"FAILED source 'gone': folder {missing} does not exist", run.stderr
    prefect_lines = [line for line in run.stderr.splitlines() if " | " in line or "Traceback" in line]
    assert not prefect_lines, run.stderr
    assert all(line.startswith(("cairn: ", "FAILED ")) for line in run.stderr.splitlines()), run.stderr
    verbose = cairn("--verbose", "ingest", "--config", str(config), cwd=tmp_path)
    assert verbose.returncode == 2 and "Traceback" in verbose.stderr and "| ERROR" in verbose.stderr


def test_bash_completes_cairn_with_the_script_it_prints():
    """The script of `cairn completion bash`, sourced in a real bash, completes a command and a flag offline."""
    import shutil

    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash on this machine")
    script = """
        eval "$(cairn completion bash)"
        COMP_WORDS=(cairn rec); COMP_CWORD=1; _cairn_completion cairn; echo "${COMPREPLY[@]}"
        COMP_WORDS=(cairn query --as); COMP_CWORD=2; _cairn_completion cairn; echo "${COMPREPLY[@]}"
    """
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run([bash, "-c", script], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["reconcile", "--as-of"], done.stdout
