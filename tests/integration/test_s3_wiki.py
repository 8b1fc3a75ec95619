"""A wiki read from S3 (moto as a real HTTP endpoint on 127.0.0.1) through the real Prefect flow and Milvus Lite."""

from __future__ import annotations

from dataclasses import asdict

import pytest

from cairn.errors import SourcesFailed
from cairn.flows.ingest import ingest_flow
from cairn.schemas.run_report import DocumentCounts
from tests.conftest import write_config
from tests.http_proxy import FaultyProxy
from tests.integration import corpus
from tests.integration.test_ingest_flow import rows


def upload_tree(client, root, bucket, prefix):
    for path in sorted(root.rglob("*.md")):
        client.put_object(Bucket=bucket, Key=f"{prefix}/{path.relative_to(root).as_posix()}", Body=path.read_bytes())


@pytest.mark.core
def test_s3_wiki_ingests_reindexes_a_changed_object_and_drops_a_deleted_one(
    tmp_path, prefect_server, s3, moto_endpoint
):
    corpus.build(tmp_path / "wiki")
    s3.create_bucket(Bucket="wiki")
    upload_tree(s3, tmp_path / "wiki" / "acme", "wiki", "pages/acme")  # the acme tenant's 3 pages
    s3.put_object(Bucket="wiki", Key="pages/acme/notes.txt", Body=b"not markdown")
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
        ],
        s3={"endpoint_url": moto_endpoint, "region": "us-east-1", "page_size": 2},
    )

    first = ingest_flow(config_path=str(config))
    assert first["documents"] == asdict(DocumentCounts(seen=3, indexed=3)), first["failures"]
    stored = rows(config).values()
    assert {r.locator for r in stored} == {
        "acme/ledger-failover.md",
        "acme/kafka-lag.md",
        "acme/leaked-credentials.md",
    }
    etag = s3.head_object(Bucket="wiki", Key="pages/acme/kafka-lag.md")["ETag"].strip('"')
    assert {r.version_hash for r in stored if r.locator == "acme/kafka-lag.md"} == {etag}

    again = ingest_flow(config_path=str(config))
    assert again["documents"]["unchanged"] == 3 and again["documents"]["indexed"] == 0

    page = (tmp_path / "wiki" / "acme" / "kafka-lag.md").read_text()
    s3.put_object(
        Bucket="wiki", Key="pages/acme/kafka-lag.md", Body=page.replace("twelve replicas", "sixteen replicas").encode()
    )
    s3.delete_object(Bucket="wiki", Key="pages/acme/ledger-failover.md")
    changed = ingest_flow(config_path=str(config))
    assert changed["documents"]["indexed"] == 1 and changed["documents"]["deleted"] == 1
    assert changed["documents"]["unchanged"] == 1 and changed["documents"]["failed"] == 0
    stored = rows(config).values()
    assert not any(r.locator == "acme/ledger-failover.md" for r in stored)
    kafka = [r for r in stored if r.locator == "acme/kafka-lag.md"]
    new_etag = s3.head_object(Bucket="wiki", Key="pages/acme/kafka-lag.md")["ETag"].strip('"')
    assert new_etag != etag and {r.version_hash for r in kafka} == {new_etag}
    assert any("sixteen replicas" in r.text for r in kafka) and not any("twelve replicas" in r.text for r in kafka)


def test_a_missing_bucket_fails_the_source_with_a_message_naming_it(tmp_path, prefect_server, s3, moto_endpoint):
    config = write_config(
        tmp_path / "cairn.toml",
        tmp_path / "index",
        [
            {
                "name": "s3-wiki",
                "type": "wiki",
                "uri": "s3://absent/pages",
                "tenant": "acme",
                "acl": ["sre"],
                "s3_endpoint_url": moto_endpoint,
            },
        ],
    )
    with pytest.raises(SourcesFailed) as failed:
        ingest_flow(config_path=str(config))
    errors = [f["error"] for f in failed.value.report["failures"]]
    assert any("s3://absent/pages" in e and "does not exist" in e for e in errors), errors


def test_s3_slowdowns_are_retried_with_backoff_and_the_ingest_succeeds(tmp_path, prefect_server, s3, moto_endpoint):
    corpus.build(tmp_path / "wiki")
    s3.create_bucket(Bucket="wiki")
    upload_tree(s3, tmp_path / "wiki" / "acme", "wiki", "pages")  # three pages
    with FaultyProxy(moto_endpoint, failures=2) as proxy:  # every request answered 503 SlowDown twice first
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
                    "s3_endpoint_url": proxy.url,
                },
            ],
            s3={"region": "us-east-1", "retry_attempts": 3},
        )
        report = ingest_flow(config_path=str(config))
    assert report["documents"] == asdict(DocumentCounts(seen=3, indexed=3)), report["failures"]
    by_request: dict = {}
    for seen in proxy.requests:
        by_request.setdefault((seen["method"], seen["path"]), []).append((seen["attempt"], seen["max"], seen["status"]))
    lists = [k for k in by_request if "list-type=2" in k[1]]
    gets = [k for k in by_request if k[0] == "GET" and k not in lists]
    assert len(lists) == 1 and len(gets) == 3, by_request
    for attempts in by_request.values():  # botocore numbered its own retries: two refused, the third served
        assert attempts == [(1, 3, 503), (2, 3, 503), (3, 3, 200)]


def test_s3_retries_exhausted_fail_the_source_naming_the_uri_and_the_others_complete(
    tmp_path, prefect_server, s3, moto_endpoint
):
    corpus.build(tmp_path / "wiki")
    for bucket in ("flaky", "steady"):
        s3.create_bucket(Bucket=bucket)
        upload_tree(s3, tmp_path / "wiki" / "acme", bucket, "pages")
    with FaultyProxy(moto_endpoint, failures=None) as proxy:  # always 503
        config = write_config(
            tmp_path / "cairn.toml",
            tmp_path / "index",
            [
                {
                    "name": "flaky",
                    "type": "wiki",
                    "uri": "s3://flaky/pages",
                    "tenant": "acme",
                    "acl": ["sre"],
                    "acl_ceiling": corpus.ACME_GROUPS,
                    "s3_endpoint_url": proxy.url,
                },
                {
                    "name": "steady",
                    "type": "wiki",
                    "uri": "s3://steady/pages",
                    "tenant": "acme",
                    "acl": ["sre"],
                    "acl_ceiling": corpus.ACME_GROUPS,
                },
                {
                    "name": "folder",
                    "type": "wiki",
                    "path": str(tmp_path / "wiki" / "globex"),
                    "tenant": "globex",
                    "acl": ["globex-ops"],
                },
            ],
            s3={"endpoint_url": moto_endpoint, "region": "us-east-1", "retry_attempts": 2},
        )
        with pytest.raises(SourcesFailed, match="failed: flaky") as failed:  # the run fails after the others ran
            ingest_flow(config_path=str(config))
    report = failed.value.report
    (failure,) = report["failures"]
    assert (failure["source"], failure["document"]) == ("flaky", "*")
    assert "s3://flaky/pages" in failure["error"] and "SlowDown (HTTP 503) after 2 attempts" in failure["error"]
    assert "retry_attempts" in failure["error"]
    assert report["documents"]["indexed"] == 4 and report["sources"] == ["flaky", "steady", "folder"]
    assert [(r["attempt"], r["max"], r["status"]) for r in proxy.requests] == [(1, 2, 503), (2, 2, 503)]
    assert {r.locator for r in rows(config).values()} == {
        "ledger-failover.md",
        "kafka-lag.md",
        "leaked-credentials.md",
        "scanner.md",
    }
