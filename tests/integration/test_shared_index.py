"""One writer and many readers on the embedded index, each its own process (index/liteserver.py): a service's
long-lived Retriever keeps answering through a whole ingest, the ingest is not refused because it is open,
the CLI's query and status answer mid-ingest, the Retriever sees the new content once it is written, and it
keeps answering through a model switch (a rebuild beside the serving collection, then the alias switch)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import REPO, write_config, write_page
from tests.integration import corpus
from tests.integration.test_cli import SERVER, cairn, shared_server  # noqa: F401 - the fixture

# A service: one Retriever for its whole life, asking in a loop until told to stop; its tally in a file.
SERVICE = r"""
import json, sys, time
from pathlib import Path
from cairn.query import Principal, Retriever

config, stop, tally = sys.argv[1:4]
retriever = Retriever.from_config(config)
state = {"answered": 0, "empty": 0, "errors": [], "saw_new": False}
while not Path(stop).exists():
    try:
        old = retriever.retrieve("settlement-writer consumer lag on payments.settled", Principal("acme", ["sre"]), k=3)
        new = retriever.retrieve("quokka-relay certificate rotation", Principal("acme", ["sre"]), k=3)
        state["answered"] += 2
        state["empty"] += not old.hits
        state["saw_new"] = state["saw_new"] or any("quokka-relay" in hit.text for hit in new.hits)
        state["encoder"] = retriever.encoder.identity
    except Exception as exc:
        state["errors"].append(repr(exc)[:300])
    Path(tally + ".tmp").write_text(json.dumps(state))
    Path(tally + ".tmp").replace(tally)
    time.sleep(0.05)
"""


def wait_for(check, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def read(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def test_a_service_reads_through_an_ingest_and_a_model_switch_and_the_cli_answers_mid_ingest(tmp_path, shared_server):  # noqa: F811
    from cairn.flows.ingest import ingest_flow

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
    assert ingest_flow(config_path=str(config))["documents"]["indexed"] == 3

    stop, tally = tmp_path / "stop", tmp_path / "tally.json"
    service = subprocess.Popen(
        [sys.executable, "-c", SERVICE, str(config), str(stop), str(tally)],
        cwd=REPO,
        env={**os.environ, **SERVER},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: read(tally).get("answered", 0) >= 2, 120, "the service's first answers")
        write_page(
            tmp_path / "wiki",
            "acme/quokka.md",
            "# Quokka relay\n\n## Rotate\n\nRotate the quokka-relay "
            "certificate with certbot renew on relay-03, then reload nginx. " + corpus.FILLER * 3,
            title="Quokka relay",
            tenant="acme",
            acl=["sre"],
        )
        hold = tmp_path / "hold"
        ingest = subprocess.Popen(
            [sys.executable, "-m", "cairn.cli", "ingest", "--config", str(config), "--json"],
            cwd=REPO,
            env={**os.environ, **SERVER, "CAIRN_FAILPOINT": "written", "CAIRN_FAILPOINT_HOLD": str(hold)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_for(hold.exists, 180, "the ingest to reach its pause")  # the new page is written, the run not over

        answered_before = read(tally)["answered"]
        status = cairn("status", "--json", "--config", str(config))
        assert status.returncode == 0, status.stderr
        assert sum(r["rows"] for r in json.loads(status.stdout)["rows"]) > 0
        query = cairn(
            "query",
            "how do I promote the ledger-db replica",
            "--tenant",
            "acme",
            "--group",
            "sre",
            "--k",
            "2",
            "--json",
            "--config",
            str(config),
        )
        assert query.returncode == 0, query.stderr
        assert "ledger-db-replica-02" in json.loads(query.stdout)["results"][0]["text"]
        wait_for(lambda: read(tally)["answered"] > answered_before, 60, "the service to answer mid-ingest")

        hold.unlink()
        out, err = ingest.communicate(timeout=300)
        assert ingest.returncode == 0, err
        assert json.loads(out)["documents"]["indexed"] == 1
        wait_for(lambda: read(tally)["saw_new"], 60, "the service to find the page the ingest wrote")

        before = read(tally)["encoder"]
        text = config.read_text()  # the model switch a user makes
        config.write_text(text.replace("[embedding]\n", '[embedding]\nmodel = "all-MiniLM-L6-v2"\n'))
        switch = cairn("ingest", "--config", str(config), "--json")
        assert switch.returncode == 0, switch.stderr
        assert json.loads(switch.stdout)["index"]["switch"] == "done"
        wait_for(lambda: read(tally)["encoder"].startswith("all-MiniLM-L6-v2/"), 60, "the service to follow the switch")
        answered_after = read(tally)["answered"]
        wait_for(lambda: read(tally)["answered"] > answered_after, 60, "the service to answer after the switch")
        assert before.startswith("bge-small-en-v1.5/")
    finally:
        stop.touch()
        service.wait(60)
    final = read(tally)
    assert final["errors"] == [] and final["empty"] == 0, final
    assert final["answered"] >= 6 and service.returncode == 0, service.stderr.read()
