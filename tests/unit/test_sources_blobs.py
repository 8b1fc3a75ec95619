"""sources.blobs: a folder and a real S3 HTTP endpoint (moto on 127.0.0.1) behind one small interface."""

from __future__ import annotations

import hashlib
import os
import time

import pytest

from cairn.errors import ConfigError
from cairn.schemas.config import S3Config, WikiSourceConfig, parse_config
from cairn.sources import DiscoveryFailure, DocumentError, SourceError, open_source
from cairn.sources.base import FileStat
from cairn.sources.blobs import Blob, FolderStore, S3Store, open_store
from cairn.sources.wiki import WikiSource
from tests.conftest import free_port

MD = (".md", ".markdown")


def put(client, bucket, key, body: bytes):
    client.put_object(Bucket=bucket, Key=key, Body=body)


def s3_source(uri, endpoint, **extra) -> WikiSourceConfig:
    return WikiSourceConfig(
        name="s3wiki", type="wiki", uri=uri, tenant="acme", acl=["sre"], s3_endpoint_url=endpoint, **extra
    )


def test_folder_store_lists_sorted_reads_and_gives_file_uris(tmp_path):
    (tmp_path / "team").mkdir()
    (tmp_path / "team" / "b.md").write_bytes(b"# B\n")
    (tmp_path / "a.MD").write_bytes(b"# A\n")
    (tmp_path / "team" / "skip.txt").write_bytes(b"x")
    store = FolderStore(tmp_path, "w")
    blobs = list(store.list(MD))
    assert [b.key for b in blobs] == ["a.MD", "team/b.md"]
    stat = (tmp_path / "team" / "b.md").stat()
    seen = FileStat(4, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)
    assert blobs[1] == Blob("team/b.md", 4, None, int(stat.st_mtime), stat=seen)
    assert store.read_bytes("team/b.md") == b"# B\n"
    with store.local_path("team/b.md") as path:
        assert path == tmp_path / "team" / "b.md"
    assert store.uri("team/b.md") == tmp_path.resolve().as_uri() + "/team/b.md"
    with pytest.raises(DocumentError, match="cannot read file") as err:
        store.read_bytes("gone.md")
    assert err.value.locator == "gone.md"
    with pytest.raises(SourceError, match="does not exist"):
        list(FolderStore(tmp_path / "missing", "w").list(MD))


def test_s3_listing_pages_through_a_prefix_with_etags(s3, moto_endpoint):
    before = int(time.time()) - 5  # before the uploads: their LastModified falls after it however slow they are
    s3.create_bucket(Bucket="docs")
    for name in ("e.md", "a.md", "team/c.md", "team/b.markdown", "d.md"):
        put(s3, "docs", f"wiki/{name}", f"# {name}\n".encode())
    put(s3, "docs", "wiki/image.png", b"\x89PNG")
    put(s3, "docs", "wiki/", b"")  # a console "folder" marker
    put(s3, "docs", "other/z.md", b"# outside the prefix\n")
    store = S3Store("s3://docs/wiki/", S3Config(endpoint_url=moto_endpoint, page_size=2), source_name="w")
    calls = []
    store.client.meta.events.register("before-call.s3.ListObjectsV2", lambda **kw: calls.append(1))
    blobs = list(store.list(MD))
    assert [b.key for b in blobs] == ["a.md", "d.md", "e.md", "team/b.markdown", "team/c.md"]
    assert len(calls) == 4  # 8 keys under the prefix, 2 per page
    a = blobs[0]
    assert a.version == hashlib.md5(b"# a.md\n").hexdigest() and '"' not in a.version
    assert a.size == len(b"# a.md\n") and before <= a.modified <= time.time() + 5
    raw, read = store.fetch("a.md")
    assert raw == b"# a.md\n" and read.version == a.version
    assert store.uri("team/c.md") == "s3://docs/wiki/team/c.md"
    with pytest.raises(DocumentError, match="no longer exists") as err:
        store.read_bytes("nope.md")
    assert err.value.locator == "nope.md" and "s3://docs/wiki/nope.md" in err.value.reason


def test_s3_local_path_streams_into_a_temporary_file_removed_afterwards(s3, moto_endpoint):
    s3.create_bucket(Bucket="docs")
    body = os.urandom(3 * 1024 * 1024)
    put(s3, "docs", "big.pdf", body)
    store = S3Store("s3://docs", S3Config(endpoint_url=moto_endpoint))
    with store.local_path("big.pdf") as path:
        assert path.suffix == ".pdf" and path.read_bytes() == body
    assert not path.exists()
    with pytest.raises(DocumentError, match="no longer exists"):
        with store.local_path("missing.pdf"):
            pass
    with pytest.raises(RuntimeError):  # removed even when the caller fails
        with store.local_path("big.pdf") as path:
            raise RuntimeError
    assert not path.exists()


def test_missing_bucket_names_the_uri_and_never_the_credentials(s3, moto_endpoint, monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "very-secret-value-42")
    store = open_store(s3_source("s3://no-such-bucket/wiki", moto_endpoint), S3Config())
    with pytest.raises(SourceError) as err:
        list(store.list(MD))
    message = str(err.value)
    assert "s3://no-such-bucket/wiki" in message and "does not exist" in message and "bucket name" in message
    assert "'s3wiki'" in message and "very-secret-value-42" not in message and "test" not in message


def test_unreachable_endpoint_is_a_source_error_that_says_what_to_check(s3):
    store = open_store(s3_source("s3://docs/wiki", f"http://user:pw@127.0.0.1:{free_port()}"))
    with pytest.raises(SourceError) as err:
        list(store.list(MD))
    message = str(err.value)
    assert "cannot reach the S3 endpoint" in message and "endpoint_url" in message and "s3://docs/wiki" in message
    assert "pw" not in message


def test_open_store_chooses_by_config_and_refuses_the_rest(moto_endpoint):
    folder = open_store(WikiSourceConfig(name="w", type="wiki", path="/tmp", tenant="a"), S3Config())
    assert isinstance(folder, FolderStore)
    s3 = S3Config(endpoint_url="http://127.0.0.1:1", region="eu-west-1", page_size=7)
    store = open_store(WikiSourceConfig(name="w", type="wiki", uri="s3://b/p", tenant="a"), s3)
    assert (store.bucket, store.prefix, store.page_size, store.client.meta.region_name) == ("b", "p", 7, "eu-west-1")
    assert store.client.meta.endpoint_url == "http://127.0.0.1:1"
    override = open_store(s3_source("s3://b", moto_endpoint, s3_region="us-west-2"), s3)
    assert override.client.meta.endpoint_url == moto_endpoint and override.client.meta.region_name == "us-west-2"
    # refused when the configuration is loaded, naming the source and the key, never echoing a credential
    for bad, message in [
        ({}, "'w' \\(wiki\\): entry: set exactly one of path"),
        ({"uri": "https://example.invalid/x"}, "must look like s3://bucket/prefix"),
        (
            {"uri": "s3://b", "aws_secret_access_key": "hunter2"},
            "unknown key 'aws_secret_access_key'; credentials never",
        ),
    ]:
        with pytest.raises(ConfigError, match=message) as err:
            parse_config({"sources": [{"name": "w", "type": "wiki", "tenant": "a", **bad}]})
        assert "hunter2" not in str(err.value)


def test_s3_config_table_and_credentials_refused():
    config = parse_config({"s3": {"endpoint_url": "http://minio:9000", "page_size": 50}})
    assert config.s3.endpoint_url == "http://minio:9000" and config.s3.page_size == 50 and config.s3.region is None
    assert parse_config({}).s3.page_size == 1000
    from cairn.schemas.config import ConfigError

    with pytest.raises(ConfigError, match="s3"):
        parse_config({"s3": {"aws_secret_access_key": "x"}})


def test_s3_retries_come_from_the_s3_table():
    from cairn.schemas.config import ConfigError

    config = parse_config({"s3": {"retry_attempts": 7, "retry_mode": "adaptive"}})
    store = open_store(WikiSourceConfig(name="w", type="wiki", uri="s3://b/p", tenant="a"), config.s3)
    assert store.client.meta.config.retries == {"total_max_attempts": 7, "mode": "adaptive"}
    default = open_store(WikiSourceConfig(name="w", type="wiki", uri="s3://b/p", tenant="a"), S3Config())
    assert default.client.meta.config.retries == {"total_max_attempts": 5, "mode": "standard"}
    with pytest.raises(ConfigError, match="s3.retry_attempts"):
        parse_config({"s3": {"retry_attempts": 0}})


def test_wiki_over_s3_versions_by_etag_dates_by_last_modified_and_refuses_big_objects_unread(s3, moto_endpoint):
    s3.create_bucket(Bucket="docs")
    put(s3, "docs", "wiki/ops/db.md", b"# Ledger DB failover\n\nSteps.\n")
    put(s3, "docs", "wiki/dated.md", b"---\nupdated: 2026-03-14\n---\n# Dated\n\ntext\n")
    put(s3, "docs", "wiki/huge.md", b"# Huge\n\n" + b"x" * 5000)
    source = open_source(s3_source("s3://docs/wiki", moto_endpoint, max_file_bytes=1000), {}, s3=S3Config(page_size=2))
    assert isinstance(source, WikiSource)
    gets = []
    source.store.client.meta.events.register("before-call.s3.GetObject", lambda **kw: gets.append(1))
    found = list(source.discover())
    assert not gets  # listing alone decides what changed
    failures = [f for f in found if isinstance(f, DiscoveryFailure)]
    assert [f.locator for f in failures] == ["huge.md"] and "max_file_bytes" in failures[0].reason
    refs = {r.locator: r for r in found if not isinstance(r, DiscoveryFailure)}
    etag = s3.head_object(Bucket="docs", Key="wiki/ops/db.md")["ETag"].strip('"')
    assert refs["ops/db.md"].version_hash == etag
    doc = source.load(refs["ops/db.md"])
    modified = int(s3.head_object(Bucket="docs", Key="wiki/ops/db.md")["LastModified"].timestamp())
    assert doc.version_hash == etag and doc.updated_at == modified and doc.title == "Ledger DB failover"
    assert doc.source_uri == "s3://docs/wiki/ops/db.md" and doc.locator == "ops/db.md"
    assert source.load(refs["dated.md"]).updated_at == 1773446400  # front matter still wins


def test_a_folder_that_cannot_be_listed_fails_the_source_by_name_instead_of_being_skipped(tmp_path):
    """A folder nested deeper than the system's path limit cannot be listed (ENAMETOOLONG): the source fails
    naming it. Skipping it would make the documents inside look deleted to the next run."""
    root = tmp_path / "wiki"
    (root / "top").mkdir(parents=True)
    (root / "top" / "page.md").write_text("# Page\n\nbody\n")
    here = os.getcwd()
    try:
        os.chdir(root / "top")
        for _ in range(40):  # 40 x 121 characters: past PATH_MAX (4096), made relative step by step
            os.mkdir("d" * 120)
            os.chdir("d" * 120)
        with open("deep.md", "w") as handle:
            handle.write("# Deep\n\nbody\n")
    finally:
        os.chdir(here)
    with pytest.raises(SourceError) as failed:
        list(FolderStore(root, "wiki").list((".md",)))
    message = str(failed.value)
    assert "source 'wiki': cannot list the folder 'top/ddd" in message and "File name too long" in message
    assert "characters)" in message  # the folder's path is shortened for the message, its length said


def test_a_pdfs_version_changes_with_its_parser_and_with_its_bytes(tmp_path):
    """Switching `parser` (or a release that changes a parser's text) must re-index each PDF once: its version
    covers the parser, not only the bytes; the same bytes read by the same parser keep their version."""
    from cairn.schemas.config import PdfSourceConfig
    from cairn.sources.pdf import PdfSource

    (tmp_path / "a.pdf").write_bytes(b"%PDF-1.4\n% one\n")

    def version(parser: str) -> str:
        config = PdfSourceConfig(
            name="contracts", type="pdf", path=str(tmp_path), tenant="acme", acl=["legal"], parser=parser
        )
        [ref] = PdfSource(config).discover()
        return ref.version_hash

    pdfium, unstructured = version("pdfium"), version("unstructured")
    assert pdfium != unstructured and len(pdfium) == 64
    assert version("pdfium") == pdfium
    (tmp_path / "a.pdf").write_bytes(b"%PDF-1.4\n% two\n")
    assert version("pdfium") != pdfium
