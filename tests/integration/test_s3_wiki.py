"""A wiki read from S3 (moto as a real HTTP endpoint on 127.0.0.1) through the real Prefect flow and Milvus Lite."""
from __future__ import annotations

from flows.ingest import ingest_flow
from tests.conftest import write_config
from tests.integration import corpus
from tests.integration.test_ingest_flow import rows


def upload_tree(client, root, bucket, prefix):
    for path in sorted(root.rglob("*.md")):
        client.put_object(Bucket=bucket, Key=f"{prefix}/{path.relative_to(root).as_posix()}", Body=path.read_bytes())


def test_s3_wiki_ingests_reindexes_a_changed_object_and_drops_a_deleted_one(tmp_path, prefect_server, s3, moto_endpoint):
    corpus.build(tmp_path / "wiki")
    s3.create_bucket(Bucket="wiki")
    upload_tree(s3, tmp_path / "wiki", "wiki", "pages")  # acme/ (3 pages) and globex/ (1 page)
    s3.put_object(Bucket="wiki", Key="pages/acme/notes.txt", Body=b"not markdown")
    config = write_config(tmp_path / "cairn.toml", tmp_path / "index", [
        {"name": "s3-wiki", "type": "wiki", "uri": "s3://wiki/pages", "tenant": "acme", "acl": ["sre"]},
    ], s3={"endpoint_url": moto_endpoint, "region": "us-east-1", "page_size": 2})

    first = ingest_flow(config_path=str(config))
    assert first["documents"] == {"seen": 4, "indexed": 4, "unchanged": 0, "deleted": 0, "failed": 0}, first["failures"]
    stored = rows(config).values()
    assert {r["locator"] for r in stored} == {"acme/ledger-failover.md", "acme/kafka-lag.md",
                                              "acme/leaked-credentials.md", "globex/scanner.md"}
    etag = s3.head_object(Bucket="wiki", Key="pages/acme/kafka-lag.md")["ETag"].strip('"')
    assert {r["version_hash"] for r in stored if r["locator"] == "acme/kafka-lag.md"} == {etag}

    again = ingest_flow(config_path=str(config))
    assert again["documents"]["unchanged"] == 4 and again["documents"]["indexed"] == 0

    page = (tmp_path / "wiki" / "acme" / "kafka-lag.md").read_text()
    s3.put_object(Bucket="wiki", Key="pages/acme/kafka-lag.md",
                  Body=page.replace("twelve replicas", "sixteen replicas").encode())
    s3.delete_object(Bucket="wiki", Key="pages/acme/ledger-failover.md")
    changed = ingest_flow(config_path=str(config))
    assert changed["documents"]["indexed"] == 1 and changed["documents"]["deleted"] == 1
    assert changed["documents"]["unchanged"] == 2 and changed["documents"]["failed"] == 0
    stored = rows(config).values()
    assert not any(r["locator"] == "acme/ledger-failover.md" for r in stored)
    kafka = [r for r in stored if r["locator"] == "acme/kafka-lag.md"]
    new_etag = s3.head_object(Bucket="wiki", Key="pages/acme/kafka-lag.md")["ETag"].strip('"')
    assert new_etag != etag and {r["version_hash"] for r in kafka} == {new_etag}
    assert any("sixteen replicas" in r["text"] for r in kafka) and not any("twelve replicas" in r["text"] for r in kafka)


def test_a_missing_bucket_fails_the_source_with_a_message_naming_it(tmp_path, prefect_server, s3, moto_endpoint):
    config = write_config(tmp_path / "cairn.toml", tmp_path / "index", [
        {"name": "s3-wiki", "type": "wiki", "uri": "s3://absent/pages", "tenant": "acme", "acl": ["sre"],
         "s3_endpoint_url": moto_endpoint},
    ])
    report = ingest_flow(config_path=str(config))
    errors = [f["error"] for f in report["failures"]]
    assert any("s3://absent/pages" in e and "does not exist" in e for e in errors), report["failures"]
