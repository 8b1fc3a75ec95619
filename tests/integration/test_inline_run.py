"""A `cairn ingest` from a shell with no Prefect API configured runs in its own process (flows/run.py InlineHost):
no Prefect server is started and Prefect is not even imported, and the run is the same run: rows written, a broken
document failed alone (exit 1), the quality report written, the next run incremental."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

from tests.conftest import REPO, write_config
from tests.integration import corpus

PROBE = """
import json, sys
from cairn.cli.app import main
rc = main(sys.argv[1:])
sys.stdout.flush()
print(json.dumps({"rc": rc, "prefect": "prefect" in sys.modules}), file=sys.stderr)
"""


def ingest(config, home) -> tuple[dict, dict, str]:
    """`cairn ingest --json` in a fresh interpreter as a shell runs it: its run report, what it had loaded, stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")} | {"PREFECT_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "ingest", "--config", str(config), "--json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,  # a hang guard, not a speed limit
    )
    return json.loads(done.stdout), json.loads(done.stderr.strip().splitlines()[-1]), done.stderr


def test_an_ingest_from_the_shell_runs_in_its_own_process_without_prefect(tmp_path):
    root, _ = corpus.acme_wiki(tmp_path)
    source = {"name": "w", "type": "wiki", "path": str(root), "tenant": "acme", "acl": ["sre"]}
    source["acl_ceiling"] = corpus.ACME_GROUPS
    config = write_config(tmp_path / "c.toml", tmp_path / "index", [source], quality={"on_ingest": True})
    (root / "broken.md").write_bytes(b"\x00\x01\x02")
    home = tmp_path / "prefect-home"

    report, probe, stderr = ingest(config, home)
    assert probe == {"rc": 1, "prefect": False}, stderr  # a failed document: exit 1, after the others were written
    uuid.UUID(report["run_id"])  # a run id of its own, not a flow run's
    assert report["documents"]["indexed"] == len(list(root.rglob("*.md"))) - 1 > 0
    assert [f["document"] for f in report["failures"]] == ["broken.md"]
    assert report["rows_written"] > 0 and report["embeddings_computed"] > 0
    assert report["quality"]["success"] and (Path(report["quality"]["report_dir"]) / "index.html").exists()
    assert not home.exists(), "a run with no Prefect API configured started or wrote to a Prefect server"

    (root / "broken.md").unlink()
    page = sorted(root.rglob("*.md"))[0]
    page.write_text(page.read_text() + "\nOne more line about the runbook.\n")
    again, probe, stderr = ingest(config, home)
    assert probe == {"rc": 0, "prefect": False}, stderr
    assert again["documents"]["indexed"] == 1 and again["documents"]["unchanged"] == report["documents"]["indexed"] - 1
    assert again["quality"]["success"] and not home.exists()
