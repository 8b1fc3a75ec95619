"""Data-quality checks with real great-expectations over rows in a real Milvus Lite collection."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from cairn.chunkers import chunk_document
from cairn.embedding import load_encoder
from cairn.errors import QualityFailed
from cairn.flows.ingest import ingest_flow
from cairn.index.cache import EmbeddingCache
from cairn.index.rows import ChunkedDocument, build_rows
from cairn.index.store import MilvusStore
from cairn.quality import check_rows
from cairn.schemas import ContentType, SourceDocument, SourceType, stable_id
from cairn.schemas.config import load_config
from tests.conftest import REPO, write_config, write_page

SENTENCES = [
    "The ledger writer consumes settled payment events and appends balance movements in order.",
    "Operators confirm replication lag on every standby before promoting one of them.",
    "Each alert links to a dashboard that shows error rate, latency and saturation together.",
    "A rollback restores the previous image tag and waits for the canary analysis to pass.",
    "Credentials are rotated through Vault and the old lease is revoked once clients reconnect.",
]


def well_formed(n: int, tenant: str = "acme") -> SourceDocument:
    """A page with three ~550-token sections: inside every band."""
    body = f"# Service guide {n}\n\n"
    for part in ("Overview", "Procedure", "Verification"):
        paragraphs = "\n\n".join(" ".join(SENTENCES[(i + j) % 5] for j in range(5)) for i in range(7))
        body += f"## {part}\n\n{paragraphs}\n\n"
    return SourceDocument(
        document_id=stable_id("q", str(n)),
        source_name="guides",
        source_type=SourceType.WIKI,
        source_uri=f"file:///guides/{n}.md",
        locator=f"{n}.md",
        title=f"Service guide {n}",
        content=body,
        tenant_id=tenant,
        access_control_list=["sre"],
        content_type=ContentType.RUNBOOK,
        version_hash=stable_id("v", str(n)),
        created_at=1,
        updated_at=1,
        temporal_start=1,
    )


@pytest.fixture
def collection(tmp_path):
    config_path = write_config(tmp_path / "c.toml", tmp_path / "index", [])
    config = load_config(config_path)
    encoder = load_encoder(config.embedding.model)
    docs = [well_formed(n) for n in range(4)]
    cache = EmbeddingCache(config.embedding.cache_path, encoder.dim)
    rows, _ = build_rows([ChunkedDocument(d, chunk_document(d, config.chunking)) for d in docs], encoder, cache, 64)
    cache.close()
    store = MilvusStore(config.milvus, encoder.dim)
    store.ensure_collection()
    store.upsert(rows)
    store.flush()
    yield config, store, rows
    store.close()


def test_a_corpus_inside_the_sla_passes_and_the_report_folder_is_complete(collection):
    config, store, _ = collection
    report = check_rows(config, "is_current == true", 384, reader=store.reader)
    assert report.success, [r.to_dict() for r in report.failed()]
    assert len(report.results) >= 20 and report.rows > 0
    folder = report.report_dir
    for name in (
        "index.html",
        "summary.json",
        "token_counts.svg",
        "health.svg",
        "gx/uncommitted/data_docs/local_site/index.html",
    ):
        assert os.path.getsize(os.path.join(folder, name)) > 0, name
    summary = json.load(open(os.path.join(folder, "summary.json")))
    assert summary["success"] is True and {"expectation", "column", "success", "unexpected_percent"} <= set(
        summary["results"][0]
    )


def test_reports_show_parameters_per_source_counts_a_trend_and_latest_leads_to_the_newest(collection):
    config, store, rows = collection
    first = check_rows(config, "is_current == true", 384, reader=store.reader, name="first")
    parents = [r for r in rows if r.is_parent]
    store.upsert([replace(parents[0], token_count=2400)])  # one section over the band
    store.flush()
    second = check_rows(config, "is_current == true", 384, reader=store.reader, name="second")

    size = next(r for r in second.results if r.column == "full_text token_count")
    assert size.params == {
        "min_value": config.chunking.parent_min_tokens,
        "max_value": config.chunking.parent_max_tokens,
        "mostly": config.quality.parent_mostly,
    }
    assert (
        size.describe_params()
        == f"{config.chunking.parent_min_tokens} to {config.chunking.parent_max_tokens}, mostly 0.95"
    )
    guides = second.per_source["guides"]
    assert (
        guides["documents"] == 4
        and guides["rows"] == len(rows)
        and guides["failed"] == ["guides.runbook: full_text token_count"]
    )
    assert [(t["report"], t["success"]) for t in second.trend] == [
        (os.path.basename(first.report_dir), True),
        (os.path.basename(second.report_dir), False),
    ]
    latest = os.path.join(os.path.dirname(second.report_dir), "latest")
    assert os.path.realpath(latest) == os.path.realpath(second.report_dir)
    page = open(os.path.join(latest, "index.html"), encoding="utf-8").read()
    assert '<section id="sources">' in page and '<section id="trend">' in page and "mostly 0.95" in page
    assert json.load(open(os.path.join(latest, "summary.json")))["trend"][-1]["failed"] == 1


def test_a_one_tenant_report_keeps_out_of_the_trend_and_latest_and_the_page_charts_every_band(collection):
    from cairn.quality import quality_report

    config, store, rows = collection
    first = check_rows(config, "is_current == true", 384, reader=store.reader, name="first")
    one_tenant = quality_report(config, 384, tenant="acme")  # every row here, yet not a full report
    last = check_rows(config, "is_current == true", 384, reader=store.reader, name="last")

    assert one_tenant.scope == {"kind": "tenant", "description": "one tenant acme only"}
    assert [t["report"] for t in one_tenant.trend] == [os.path.basename(first.report_dir)]
    assert [t["report"] for t in last.trend] == [os.path.basename(r.report_dir) for r in (first, last)]
    root = os.path.dirname(last.report_dir)
    assert os.path.realpath(os.path.join(root, "latest")) == os.path.realpath(last.report_dir)

    page = open(os.path.join(one_tenant.report_dir, "index.html"), encoding="utf-8").read()
    header = page[: page.index("</header>")]
    assert "<dt>scope</dt><dd>one tenant acme only</dd>" in header
    assert f"<dt>index</dt><dd>collection {config.milvus.collection} at {config.milvus.uri}</dd>" in header
    assert "This report is not a full one" in page
    parents = sum(r.is_parent for r in rows)
    band = f"{config.chunking.abstract_min_tokens}-{config.chunking.abstract_max_tokens}"
    for title in (f"sections: 100% of {parents} in band", f"abstracts: 100% of {parents} in band"):
        assert f'aria-label="{title}"' in page, title  # every parent judged, every one inside its band
    assert f"(SLA {band})" in page and 'aria-label="children: ' in page and 'aria-label="section health: ' in page
    summary = json.load(open(os.path.join(one_tenant.report_dir, "summary.json")))
    assert summary["per_source"]["guides"]["sections"] == parents and summary["scope"]["kind"] == "tenant"


def test_oversized_undersized_sections_and_a_missing_tenant_fail_with_examples(collection):
    config, store, rows = collection
    parents = [r for r in rows if r.is_parent]
    broken = [
        replace(parents[0], token_count=2400),
        replace(parents[1], token_count=35),
        replace(parents[2], tenant_id=""),
    ]
    store.upsert(broken)  # the same ids: rows now carrying the defects
    store.flush()
    report = check_rows(config, "is_current == true", 384, reader=store.reader)
    failed = {(r.column, r.expectation): r for r in report.failed()}
    assert not report.success
    size = failed[("full_text token_count", "expect_column_values_to_be_between")]
    assert {e["chunk_id"] for e in size.examples} == {parents[0].chunk_id, parents[1].chunk_id}
    assert size.examples[0]["document_id"] and size.examples[0]["section_id"]
    tenant = failed[("tenant_id", "expect_column_values_to_not_be_null")]
    assert [e["chunk_id"] for e in tenant.examples] == [parents[2].chunk_id]
    assert ("chunk_id", "expect_column_values_to_be_unique") not in failed


def test_cairn_report_in_a_long_lived_process_lets_go_of_the_index_it_read(collection):
    from cairn.index import liteserver
    from cairn.quality import quality_report

    config, store, _ = collection
    assert liteserver.leases(Path(config.milvus.uri)) == 1  # the writer's, held by the fixture
    assert quality_report(config, 384).success
    assert liteserver.leases(Path(config.milvus.uri)) == 1  # the report's own connection is closed


@pytest.mark.core
def test_the_flow_writes_a_report_and_fails_the_run_only_under_a_fail_policy(tmp_path, prefect_server):
    # a code fence is never cut below hard_block_tokens: this page's one section is over the band
    fence = "\n".join(f"kubectl -n billing annotate pod worker-{n} drained=true --overwrite" for n in range(120))
    write_page(tmp_path / "wiki", "fence.md", f"# Annotate\n\n```\n{fence}\n```\n")
    source = {"name": "w", "type": "wiki", "path": str(tmp_path / "wiki"), "tenant": "acme", "acl": ["sre"]}
    warn = write_config(tmp_path / "warn.toml", tmp_path / "index", [source], quality={"on_ingest": True})
    report = ingest_flow(config_path=str(warn))
    assert (
        report["quality"]["success"] is False and "w.runbook: full_text token_count" not in report["quality"]["failed"]
    )
    assert any("full_text token_count" in f for f in report["quality"]["failed"])
    assert os.path.exists(os.path.join(report["quality"]["report_dir"], "index.html"))
    strict = write_config(
        tmp_path / "fail.toml", tmp_path / "index2", [dict(source, quality_policy="fail")], quality={"on_ingest": True}
    )
    with pytest.raises(QualityFailed, match="data quality failed for w"):
        ingest_flow(config_path=str(strict))


def test_cairn_report_json_contract_and_s3_upload(collection, tmp_path):
    import boto3
    from moto.server import ThreadedMotoServer

    config, store, _ = collection
    store.close()  # release the Lite file for the subprocess
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    try:
        endpoint = f"http://127.0.0.1:{server._server.server_port}"
        env = {
            **os.environ,
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
        s3 = boto3.client(
            "s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test"
        )
        s3.create_bucket(Bucket="reports")
        text = (
            open(config.config_path)
            .read()
            .replace("[quality]", f'[quality]\nreport_uri = "s3://reports/cairn"\ns3_endpoint_url = "{endpoint}"', 1)
        )
        path = tmp_path / "with-s3.toml"
        path.write_text(text)
        result = subprocess.run(
            [sys.executable, "-m", "cairn.cli", "report", "--json", "--config", str(path)],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=1500,
        )  # a hang guard
        assert result.returncode == 0, result.stderr[-2000:]
        data = json.loads(result.stdout)
        assert data["success"] is True and os.path.isdir(data["report_dir"])
        assert {"expectation", "column", "success", "unexpected_percent"} <= set(data["results"][0])
        keys = {o["Key"] for o in s3.list_objects_v2(Bucket="reports")["Contents"]}
        folder = os.path.basename(data["report_dir"])
        assert {f"cairn/{folder}/index.html", f"cairn/{folder}/summary.json"} <= keys
    finally:
        server.stop()


def test_a_section_too_short_to_fill_the_abstract_band_is_not_held_against_its_abstract(collection):
    from cairn.quality.frames import to_frame
    from cairn.quality.report_folder import write_report
    from cairn.schemas.row_figures import figures

    config, _, rows = collection
    frame = to_frame(figures(r) for r in rows)
    parents = frame.index[frame["chunk_type"] == "full_text"]
    short, thin = parents[0], parents[1]
    frame.loc[short, ["token_count", "abstract_token_count", "whole_document"]] = [60, 60, True]  # a short page
    healthy = write_report(frame, config, 384, "short", "short")
    abstract = next(r for r in healthy.results if r.column == "abstract_token_count")
    assert abstract.success and abstract.element_count == len(parents) - 1  # the short page is exempt
    frame.loc[thin, "abstract_token_count"] = 40  # a long section with a thin abstract still fails
    thin_report = write_report(frame, config, 384, "thin", "thin")
    failed = next(r for r in thin_report.results if r.column == "abstract_token_count")
    assert not failed.success and [e["chunk_id"] for e in failed.examples] == [frame.loc[thin, "chunk_id"]]
