"""A first ingest says what it will do before the model works: its progress line for a source comes before the
first embedding batch ends (the run is killed right there, by the `embedded` failpoint, and the line is already on
stderr). Before, the first line came only after a whole batch of documents was parsed, embedded and written."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import REPO, write_config
from tests.integration import corpus


def test_the_first_progress_line_comes_before_the_first_embedding_batch_ends(tmp_path):
    root, _ = corpus.acme_wiki(tmp_path)
    source = {"name": "w", "type": "wiki", "path": str(root), "tenant": "acme", "acl": ["sre"]}
    source["acl_ceiling"] = corpus.ACME_GROUPS
    config = write_config(tmp_path / "c.toml", tmp_path / "index", [source])
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env |= {"PREFECT_HOME": str(tmp_path / "prefect-home"), "CAIRN_FAILPOINT": "embedded"}
    done = subprocess.run(
        [sys.executable, "-m", "cairn.cli", "ingest", "--config", str(config)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,  # a hang guard, not a speed limit
    )
    assert done.returncode == -9, done.stderr[-2000:]  # killed at the end of the first embedding batch
    pages = len(list(root.rglob("*.md")))
    assert f"cairn: w: 0/{pages} documents to index" in done.stderr.splitlines()
