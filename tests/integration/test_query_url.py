"""`cairn query --url` against a real `cairn serve` (uvicorn on 127.0.0.1, a Lite index written by the real encoder):
the command prints what it prints when it answers in its own process, byte for byte, without opening the index or
the model (no pymilvus, no onnxruntime imported), and the service's refusals are Cairn's one line and exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.integration.test_serve import KEYS, LEDGER, REPO, Server, serve_config

PROBE = """
import json, sys
from cairn.cli.app import main
rc = main(sys.argv[1:])
sys.stdout.flush()
heavy = ("pymilvus", "onnxruntime", "prefect", "great_expectations", "mcp", "fastapi", "cairn.query", "cairn.index")
print(json.dumps({"rc": rc, "loaded": sorted(m for m in heavy if m in sys.modules)}), file=sys.stderr)
"""


def cairn(*args: str, key: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CAIRN_KEY"}
    if key is not None:
        env["CAIRN_KEY"] = key
    return subprocess.run(
        [sys.executable, "-m", "cairn.cli", *args], cwd=REPO, capture_output=True, text=True, timeout=600, env=env
    )


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    running = Server(serve_config(tmp_path_factory.mktemp("query-url")))
    yield running
    running.stop()


@pytest.mark.core
def test_url_prints_what_the_command_prints_answering_in_its_own_process(service, tmp_path):
    key_file = tmp_path / "bot.key"
    key_file.write_text(KEYS["acme-bot"] + "\n")  # as `cairn new-key --key-file` writes it
    question = ["query", LEDGER, "--k", "3"]
    here = [*question, "--tenant", "acme", "--group", "sre", "--config", str(service.config)]
    there = [*question, "--url", service.url, "--key-file", str(key_file)]
    for shape in (["--json"], []):
        local, remote = cairn(*here, *shape), cairn(*there, *shape)
        assert local.returncode == 0, local.stderr[-2000:]
        assert remote.returncode == 0, remote.stderr[-2000:]
        assert remote.stdout == local.stdout and remote.stdout
    answer = json.loads(cairn(*there, "--json").stdout)
    assert answer["results"] and "query_id" not in answer and "diagnostics" not in answer

    probe = subprocess.run(
        [sys.executable, "-c", PROBE, *there, "--json"], cwd=REPO, capture_output=True, text=True, timeout=600
    )
    state = json.loads(probe.stderr.strip().splitlines()[-1])
    assert state == {"rc": 0, "loaded": []}, probe.stderr[-2000:]  # nothing of the index or the model opened here


def test_the_services_refusals_are_the_commands_own_lines(service):
    secret = "not-a-configured-key"
    refused = cairn("query", LEDGER, "--url", service.url, key=secret)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.startswith(f"cairn: the service at {service.url} refused the key (")
    assert refused.stderr.count("\n") == 1 and secret not in refused.stderr

    # a value the index cannot take: the same line and exit code as when the command answers it itself
    bad = ["query", LEDGER, "--filters", json.dumps({"tenant_id": "globex"})]
    local = cairn(*bad, "--tenant", "acme", "--group", "sre", "--config", str(service.config))
    remote = cairn(*bad, "--url", service.url, key=KEYS["acme-bot"])
    assert local.returncode == remote.returncode == 2
    assert remote.stderr == local.stderr and remote.stderr.count("\n") == 1

    over = cairn("query", LEDGER, "--k", "50", "--url", service.url, key=KEYS["acme-bot"])  # [serve] max_k = 10
    assert over.returncode == 2 and over.stderr.startswith("cairn: ") and "k" in over.stderr
    assert over.stderr.count("\n") == 1 and "Traceback" not in over.stderr
