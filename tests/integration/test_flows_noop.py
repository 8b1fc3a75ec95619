"""flows.noop: an ingest that would change nothing is answered without a flow run (and without the temporary
Prefect server a flow run starts from the shell); anything else still runs the flow."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from cairn.flows.ingest import ingest_flow
from cairn.flows.noop import unchanged_run
from cairn.flows.options import RunOptions, Window
from cairn.schemas.config import load_config
from tests.conftest import REPO
from tests.integration import corpus


def unchanged_without_a_server(config, options: RunOptions | None = None) -> dict | None:
    """unchanged_run with no Prefect server configured, as from a shell (the session's test server stays
    configured for the flow runs around it)."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(restore_defaults={PREFECT_API_URL}):
        return unchanged_run(config, options=options)


def test_unchanged_sources_give_the_report_without_a_flow_and_any_change_gives_none(
    tmp_path, prefect_server, monkeypatch
):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    root, config_path = corpus.acme_wiki(tmp_path)
    config = load_config(config_path)
    assert unchanged_without_a_server(config) is None  # no collection yet: the flow creates it
    first = ingest_flow(config_path=str(config_path))
    report = unchanged_without_a_server(config)
    assert report is not None and report["run_id"].startswith("unchanged-")
    assert report["documents"]["unchanged"] == report["documents"]["seen"] == first["documents"]["indexed"]
    assert report["embeddings_computed"] == 0 and report["rows_written"] == 0
    backfill = RunOptions(backfill=Window())
    assert unchanged_without_a_server(config, backfill) is None  # a backfill re-processes on purpose
    assert unchanged_run(config) is None  # with a Prefect server (the test server) every run is recorded as a flow run
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    assert unchanged_without_a_server(config) is None  # a server named in the environment, Prefect imported or not
    monkeypatch.delenv("PREFECT_API_URL")

    broken = root / "broken.md"
    broken.write_bytes(b"\x00\x01")
    assert unchanged_without_a_server(config) is None  # a page not yet indexed: a flow run tries it
    broken.unlink()
    page = sorted(root.rglob("*.md"))[0]
    page.write_text(page.read_text() + "\nOne more line.\n")
    assert unchanged_without_a_server(config) is None  # an edit: work to do
    ingest_flow(config_path=str(config_path))
    page.unlink()
    assert unchanged_without_a_server(config) is None  # a removal: work to do


def test_an_unchanged_ingest_from_the_shell_starts_no_prefect_server(tmp_path, prefect_server):
    _, config = corpus.acme_wiki(tmp_path)
    first = ingest_flow(config_path=str(config))
    home = tmp_path / "prefect-home"  # where a temporary Prefect server would put its database
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"} | {"PREFECT_HOME": str(home)}
    again = subprocess.run(
        [sys.executable, "-m", "cairn.cli", "ingest", "--config", str(config), "--json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["documents"]["unchanged"] == first["documents"]["indexed"] > 0
    assert report["embeddings_computed"] == 0
    assert not list(home.rglob("*.db")), "a Prefect server was started for a run with nothing to do"
