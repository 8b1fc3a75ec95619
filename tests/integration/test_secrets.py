"""Secrets never leak. Sentinel AWS credentials, PagerDuty tokens (one accepted, one refused) and a Milvus token
go into the environment of a real `cairn ingest --json` (an S3 wiki, a missing bucket, a PagerDuty API whose
listing fails once and is retried, data-quality reports uploaded to S3) and of `cairn report`; then every
place those runs write to is searched for them: stdout, stderr, the run report, the report folders and
their uploaded copies, every file under the test's folder (index, state, caches, logs, Prefect home), every
row of the collection, and what the Prefect server recorded (flow and task runs with their state messages,
artifacts, logs, its database files, result storage)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cairn.index.store import MilvusStore
from cairn.schemas.config import load_config
from tests.conftest import REPO, write_config
from tests.integration import corpus
from tests.integration.test_pagerduty import sample
from tests.integration.test_prefect_native import task_runs
from tests.integration.test_s3_wiki import upload_tree
from tests.pagerduty_server import FakePagerDuty

SENTINELS = {
    "AWS_ACCESS_KEY_ID": "AKIASENTINEL4LEAKCHK",
    "AWS_SECRET_ACCESS_KEY": "sentinel-aws-secret-9f8e7d6c5b4a",
    "AWS_SESSION_TOKEN": "sentinel-aws-session-token-1a2b3c",
    "CAIRN_TEST_PD_TOKEN": "sentinel-pagerduty-token-77aa",
    "CAIRN_TEST_PD_REFUSED": "sentinel-pagerduty-refused-88bb",
    "CAIRN_MILVUS_TOKEN": "sentinel-milvus-token-99cc",
}


def cairn(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cairn.cli", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=600
    )


def find_sentinels(haystack: dict[str, bytes]) -> list[tuple[str, str]]:
    """(variable, where) for every sentinel found in any of the named byte strings."""
    return [
        (name, where) for where, data in haystack.items() for name, value in SENTINELS.items() if value.encode() in data
    ]


def files_under(root: Path) -> dict[str, bytes]:
    return {str(path): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def prefect_records(run_id: str) -> dict[str, bytes]:
    """What the session's Prefect server holds: runs, task runs with their states, artifacts, logs; and its files."""
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_RESULTS_LOCAL_STORAGE_PATH, PREFECT_SERVER_DATABASE_CONNECTION_URL

    final = task_runs(run_id)  # task-run states reach the server through its event recorder, a moment after the run
    with get_client(sync_client=True) as client:
        records = {
            "prefect flow runs": [r.model_dump(mode="json") for r in client.read_flow_runs()],
            "prefect task runs": [t.model_dump(mode="json") for t in final],
            "prefect artifacts": [a.model_dump(mode="json") for a in client.read_artifacts()],
            "prefect logs": [log.model_dump(mode="json") for log in client.read_logs()],
        }
    assert records["prefect task runs"] and records["prefect artifacts"]  # there was something to search
    found = {where: json.dumps(data).encode() for where, data in records.items()}
    database = Path(PREFECT_SERVER_DATABASE_CONNECTION_URL.value().split("///", 1)[1])
    found.update(files_under(database.parent))
    results = PREFECT_RESULTS_LOCAL_STORAGE_PATH.value()
    if results and Path(results).is_dir():
        found.update(files_under(Path(results)))
    return found


def collection_rows(config: Path) -> bytes:
    store = MilvusStore(load_config(config).milvus, dim=384)
    store.ensure_collection()
    try:
        described = store.client.describe_collection(store.collection)
        fields = [f["name"] for f in described["fields"] if "VECTOR" not in str(f["type"]).upper()]
        rows = [
            {name: getattr(row, name) for name in fields if hasattr(row, name)} for row in store.iterate("", fields)
        ]
    finally:
        store.close()
    assert rows and {"text", "extra", "source_uri", "title"} <= set(rows[0])
    return json.dumps(rows, default=str).encode()


@pytest.mark.core
def test_no_secret_reaches_output_files_rows_or_prefect(tmp_path, prefect_server, s3, moto_endpoint):
    from prefect.settings import PREFECT_API_URL

    corpus.build(tmp_path / "wiki")
    s3.create_bucket(Bucket="wiki")
    upload_tree(s3, tmp_path / "wiki" / "acme", "wiki", "pages")
    s3.create_bucket(Bucket="reports")
    incidents, parts = sample()
    with FakePagerDuty(incidents, parts, token=SENTINELS["CAIRN_TEST_PD_TOKEN"]) as api:
        api.faults["/incidents"] = [500]  # the listing is retried, the token in its header again
        pd = {"type": "pagerduty", "api_url": api.url, "tenant": "acme", "acl": ["sre"], "retry_base_seconds": 0.01}
        config = write_config(
            tmp_path / "cairn.toml",
            tmp_path / "index",
            [
                {
                    "name": "s3-wiki",
                    "type": "wiki",
                    "uri": "s3://wiki/pages",
                    "tenant": "acme",
                    "acl": ["sre"],
                    "acl_ceiling": corpus.ACME_GROUPS,
                },
                {
                    "name": "s3-missing",
                    "type": "wiki",
                    "uri": "s3://absent/pages",
                    "tenant": "acme",
                    "acl": ["sre"],
                    "acl_ceiling": corpus.ACME_GROUPS,
                },
                {"name": "pd", "token_env": "CAIRN_TEST_PD_TOKEN", **pd},
                {"name": "pd-refused", "token_env": "CAIRN_TEST_PD_REFUSED", **pd},
            ],
            s3={"endpoint_url": moto_endpoint, "region": "us-east-1", "retry_attempts": 2},
            quality={"on_ingest": True, "report_uri": "s3://reports/cairn"},
        )
        env = {
            **os.environ,
            **SENTINELS,
            "PYTHONPATH": str(REPO),
            "PREFECT_API_URL": PREFECT_API_URL.value(),
            "PREFECT_HOME": str(tmp_path / "prefect-home"),
            "CAIRN_FAILPOINT": "",
        }
        ingest = cairn("ingest", "--config", str(config), "--json", env=env)
        report = cairn("report", "--config", str(config), "--json", env=env)

    assert ingest.returncode == 2, ingest.stderr[-3000:]  # two sources failed as a whole, the others ran
    run = json.loads(ingest.stdout)
    failures = {f["source"]: f["error"] for f in run["failures"]}
    assert set(failures) == {"s3-missing", "pd-refused"}, run["failures"]
    assert "s3://absent/pages" in failures["s3-missing"] and "does not exist" in failures["s3-missing"]
    assert "401 Unauthorized" in failures["pd-refused"]
    assert run["documents"]["indexed"] == 3 + 6 and run["quality"]["report_dir"]
    assert report.returncode in (0, 1), report.stderr[-3000:]  # 1 = an expectation failed; either way a report
    assert json.loads(report.stdout)["report_dir"]
    uploaded = {
        o["Key"]: s3.get_object(Bucket="reports", Key=o["Key"])["Body"].read()
        for o in s3.list_objects_v2(Bucket="reports").get("Contents", [])
    }
    assert any(key.endswith("index.html") for key in uploaded)  # the sentinel credentials were used to write

    haystack = {
        "ingest stdout": ingest.stdout.encode(),
        "ingest stderr": ingest.stderr.encode(),
        "report stdout": report.stdout.encode(),
        "report stderr": report.stderr.encode(),
        "collection rows": collection_rows(config),
    }
    haystack.update({f"s3://reports/{key}": body for key, body in uploaded.items()})
    haystack.update(files_under(tmp_path))  # index, state, embedding cache, report folders, Prefect home, logs
    haystack.update(prefect_records(run["run_id"]))
    assert any(p.endswith(".db") or "cairn.db" in p for p in haystack)  # the Lite index was among the files
    leaks = find_sentinels(haystack)
    assert not leaks, f"secrets found (variable, where): {leaks}"
