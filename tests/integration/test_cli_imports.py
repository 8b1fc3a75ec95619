"""The CLI as its own top layer, end to end: `cairn query` and `cairn status` answer from a real index without
importing Prefect, the flows, great-expectations, the MCP SDK, unstructured, fpdf, the other commands' modules,
pandas and requests (which pymilvus imports: index/engine_import.py), or Rich for output that is not a terminal's;
and the human query listing shows the numbers the JSON holds, labelled."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from tests.conftest import REPO, write_config
from tests.integration import corpus

PROBE = """
import json, sys
from cairn.cli.app import main
rc = main(sys.argv[1:])
sys.stdout.flush()
heavy = ("prefect", "cairn.flows", "great_expectations", "mcp", "unstructured", "fpdf", "torch", "cairn.quality",
         "scipy", "cairn.cli.ingest", "cairn.cli.evaluate", "cairn.cli.serve", "cairn.cli.mcp", "cairn.cli.holdings",
         "pandas", "pyarrow", "requests", "urllib3", "rich")
loaded = sorted(m for m in heavy if m in sys.modules)
print(json.dumps({"rc": rc, "loaded": loaded}), file=sys.stderr)
"""


def cairn_probe(*args: str) -> tuple[subprocess.CompletedProcess, dict]:
    """Run main(args) in a fresh interpreter; return the process and what it had loaded when main returned."""
    result = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=REPO, capture_output=True, text=True, timeout=600)
    return result, json.loads(result.stderr.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, prefect_server):
    """A small wiki ingested by `cairn ingest` in its own process (it releases the Lite file when it exits)."""
    from prefect.settings import PREFECT_API_URL

    root = tmp_path_factory.mktemp("cli-imports")
    corpus.build(root / "wiki")
    config = write_config(
        root / "c.toml",
        root / "index",
        [
            {
                "name": "w",
                "type": "wiki",
                "path": str(root / "wiki" / "acme"),
                "tenant": "acme",
                "acl": ["sre"],
                "acl_ceiling": corpus.ACME_GROUPS,
            },
        ],
    )
    ingest = subprocess.run(
        [sys.executable, "-m", "cairn.cli", "ingest", "--config", str(config), "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PREFECT_API_URL": str(PREFECT_API_URL.value())},
    )
    assert ingest.returncode == 0, ingest.stderr[-2000:]
    return config


def test_query_and_status_answer_without_importing_what_they_do_not_use(indexed):
    question = ["query", "promote the ledger replica with pg_ctl", "--tenant", "acme", "--group", "sre", "--k", "2"]
    result, state = cairn_probe(*question, "--json", "--config", str(indexed))
    assert state == {"rc": 0, "loaded": []}, result.stderr[-2000:]
    assert json.loads(result.stdout)["results"][0]["title"] == "Ledger DB failover"  # stdout is the JSON alone

    result, state = cairn_probe("--config", str(indexed), "status", "--json")
    assert state == {"rc": 0, "loaded": []}, result.stderr[-2000:]
    rows = json.loads(result.stdout)["rows"]
    assert {(r["tenant"], r["source"]) for r in rows} == {("acme", "w")} and all(r["rows"] > 0 for r in rows)


def test_the_human_listing_prints_rank_fused_and_relevance_as_the_json_has_them(indexed):
    question = [
        "query",
        "consumer group lag on payments.settled",
        "--tenant",
        "acme",
        "--group",
        "sre",
        "--k",
        "3",
        "--config",
        str(indexed),
    ]
    answered = subprocess.run(  # the process ends at once after answering (cairn.cli.main): its output whole
        [sys.executable, "-m", "cairn.cli", *question, "--json"], cwd=REPO, capture_output=True, text=True, timeout=600
    )
    assert answered.returncode == 0, answered.stderr[-2000:]
    data = json.loads(answered.stdout)
    listing = subprocess.run(
        [sys.executable, "-m", "cairn.cli", *question], cwd=REPO, capture_output=True, text=True, timeout=600
    )
    assert listing.returncode == 0, listing.stderr[-2000:]
    shown = re.findall(r"^(\d+)\. fused (\S+)  relevance (\S+)", listing.stdout, flags=re.M)
    expected = [(str(rank), f"{h['fused']:.4f}", f"{h['score']:.4f}") for rank, h in enumerate(data["results"], 1)]
    assert shown == expected and shown


DEFERRED_PROBE = """
import json, sys
from cairn.index.engine_import import StandIn, import_pymilvus
import_pymilvus()
from pymilvus.orm import schema, types
from pymilvus.client import global_topology
before = sorted(m for m in ("pandas", "requests", "urllib3") if m in sys.modules)
placeholder = schema.is_valid_insert_data(object())
import pandas
frame = pandas.DataFrame({"a": [1.0]})
print(json.dumps({
    "before": before,
    "stand_ins": [isinstance(m, StandIn) for m in (schema.pd, global_topology.requests)],
    "placeholder_accepts": placeholder,
    "frame_class": schema.pd.DataFrame is pandas.DataFrame,
    "frame_accepted": schema.is_valid_insert_data(frame) and schema.check_is_row_based(frame) is False,
    "infer": [types.infer_dtype_bydata([1.0, 2.0]).name, types.infer_dtype_bydata("x").name],
    "requests": global_topology.requests.get.__module__,
}))
"""


def test_pymilvus_without_pandas_reads_pandas_once_it_is_imported():
    """The deferral changes when pandas and requests are imported, not what pymilvus does with them: before pandas
    is imported nothing is a DataFrame; after, pymilvus's checks and pandas functions are pandas' own."""
    result = subprocess.run(
        [sys.executable, "-c", DEFERRED_PROBE], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout) == {
        "before": [],
        "stand_ins": [True, True],
        "placeholder_accepts": False,
        "frame_class": True,
        "frame_accepted": True,
        "infer": ["FLOAT_VECTOR", "VARCHAR"],
        "requests": "requests.api",
    }
