"""The writer slot is held only where a run writes: a source stalled in its listing holds up no other run, and
whatever the two runs do in turn, the collection ends as one clean run would leave it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from tests.conftest import REPO, write_config
from tests.integration import corpus
from tests.integration.test_pagerduty import sample
from tests.pagerduty_server import TOKEN, FakePagerDuty

HANG_GUARD = 300


def test_a_run_stalled_listing_one_source_does_not_stop_another_run_from_writing(tmp_path, prefect_server):
    from prefect.settings import PREFECT_API_URL

    corpus.build(tmp_path / "wiki")
    incidents, parts = sample()
    with FakePagerDuty(incidents, parts) as api:
        api.faults["/incidents"] = ["hold"]  # the first run's listing waits on the API until released
        config = write_config(
            tmp_path / "c.toml",
            tmp_path / "index",
            [
                {
                    "name": "pd",
                    "type": "pagerduty",
                    "api_url": api.url,
                    "token_env": "CAIRN_TEST_PD_TOKEN",
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
        env = {**os.environ, "CAIRN_TEST_PD_TOKEN": TOKEN, "PREFECT_API_URL": str(PREFECT_API_URL.value())}
        cairn = [sys.executable, "-m", "cairn.cli"]
        first = subprocess.Popen(
            [*cairn, "ingest", "--config", str(config), "--json"],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + HANG_GUARD
            while "/incidents" not in api.paths() and first.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
            assert "/incidents" in api.paths(), "the first run never asked for the incidents"

            # the first run is listing pd, stalled: a second run writes the wiki meanwhile
            second = subprocess.run(
                [*cairn, "ingest", "--config", str(config), "--source", "w", "--json"],
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                timeout=HANG_GUARD,
            )
            assert second.returncode == 0, second.stderr[-3000:]
            assert json.loads(second.stdout)["documents"]["indexed"] == 3
            assert first.poll() is None  # still stalled
        finally:
            api.release.set()
        out, err = first.communicate(timeout=HANG_GUARD)
        assert first.returncode == 0, err[-3000:]
        report = json.loads(out)
        assert report["per_source"]["pd"]["indexed"] == 6
        assert report["per_source"]["w"]["unchanged"] == 3  # written by the second run while the first listed pd

        reconciled = subprocess.run(
            [*cairn, "reconcile", "--config", str(config), "--json"],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=HANG_GUARD,
        )
    assert reconciled.returncode == 0, reconciled.stdout[-3000:] + reconciled.stderr[-3000:]
    assert json.loads(reconciled.stdout)["clean"] is True
