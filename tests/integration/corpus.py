"""A small two-tenant wiki written by the tests: distinctive facts, several ACL groups."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import write_config, write_page

FILLER = (
    "Operators should record every action in the incident channel with a timestamp, confirm the blast radius "
    "with the service owner, and check the dashboards for error rate, latency and saturation before and after "
    "each change. When in doubt, page the secondary on-call engineer rather than guessing. "
)


# Every group the acme pages name: a source reading them grants at most these (its acl_ceiling); each page narrows.
ACME_GROUPS = ["sre", "platform", "security"]


def section(title: str, fact: str, repeat: int = 4) -> str:
    return f"## {title}\n\n{fact} " + FILLER * repeat + "\n\n"


def build(root: Path) -> dict[str, dict]:
    """Write the corpus; return locator -> {tenant, acl, fact} for assertions."""
    pages = {
        "acme/ledger-failover.md": dict(
            tenant="acme",
            acl=["sre"],
            title="Ledger DB failover",
            body="# Ledger DB failover\n\n"
            + section("Promote the replica", "Run pg_ctl promote on ledger-db-replica-02 to promote the replica.")
            + section("Repoint the pooler", "Update pgbouncer on pool-07 so writes reach the new primary.")
            + "```bash\npg_ctl promote -D /var/lib/postgresql/16/main\n```\n",
        ),
        "acme/kafka-lag.md": dict(
            tenant="acme",
            acl=["sre", "platform"],
            title="Kafka consumer lag",
            body="# Kafka consumer lag\n\n"
            + section("Diagnose", "Consumer group settlement-writer lags on topic payments.settled in events-kafka.")
            + section("Mitigate", "Scale settlement-writer to twelve replicas and raise max.poll.records to 500."),
        ),
        "acme/leaked-credentials.md": dict(
            tenant="acme",
            acl=["security"],
            title="Rotate leaked credentials",
            body="# Rotate leaked credentials\n\n"
            + section("Revoke", "Revoke the leaked vault token zebra-orchid-42 and rotate the AWS access keys.")
            + section("Audit", "Search CloudTrail for calls made with the zebra-orchid-42 token."),
        ),
        "globex/scanner.md": dict(
            tenant="globex",
            acl=["globex-ops"],
            title="Warehouse scanner API",
            body="# Warehouse scanner API\n\n"
            + section(
                "Restart", "Restart the scanner-gateway pods in the depot-east cluster with kubectl rollout restart."
            )
            + section("Verify", "Scan the test barcode GLX-000-TEST at dock 4 to verify the scanner pipeline."),
        ),
    }
    for locator, page in pages.items():
        write_page(root, locator, page["body"], title=page["title"], tenant=page["tenant"], acl=page["acl"])
    return pages


def acme_wiki(tmp_path: Path) -> tuple[Path, Path]:
    """The corpus under tmp_path/wiki, and a config of one wiki source `w` over its acme pages (index in
    tmp_path/index): the folder of those pages and the config's path."""
    build(tmp_path / "wiki")
    root = tmp_path / "wiki" / "acme"
    source = {"name": "w", "type": "wiki", "path": str(root), "tenant": "acme", "acl": ["sre"]}
    config = write_config(tmp_path / "c.toml", tmp_path / "index", [{**source, "acl_ceiling": ACME_GROUPS}])
    return root, config


def index_directly(tmp_path: Path) -> Path:
    """The two-tenant corpus chunked, embedded and written straight into a Lite index (no Prefect, no flow): for
    tests of what reads an index (the service, the adapters). Returns the config's path (index in tmp_path/index)."""
    from cairn.schemas import ContentType, SourceDocument, SourceType
    from cairn.schemas.config import load_config
    from cairn.sources import document_id

    pages = build(tmp_path / "wiki")
    config_path = write_config(tmp_path / "cairn.toml", tmp_path / "index", [])
    config = load_config(config_path)
    docs = [
        SourceDocument(
            document_id=document_id(SourceType.WIKI, f"{page['tenant']}-wiki", locator),
            source_name=f"{page['tenant']}-wiki",
            source_type=SourceType.WIKI,
            source_uri=f"file:///wiki/{locator}",
            locator=locator,
            title=page["title"],
            content=page["body"],
            tenant_id=page["tenant"],
            access_control_list=page["acl"],
            content_type=ContentType.RUNBOOK,
            version_hash=f"v-{len(page['body'])}",
            created_at=1_750_000_000,
            updated_at=1_750_000_000,
            temporal_start=1_750_000_000,
        )
        for locator, page in pages.items()
    ]
    write_documents(config, docs)
    return config_path


def write_documents(config, docs) -> None:
    """`docs` chunked, embedded by the configured model and written into the configured collection, directly (no
    flow): what the index holds for tests of what reads it."""
    from cairn.chunkers import chunk_document
    from cairn.embedding import load_encoder
    from cairn.index.cache import EmbeddingCache
    from cairn.index.rows import ChunkedDocument, build_rows
    from cairn.index.store import MilvusStore

    encoder = load_encoder(config.embedding.model)
    cache = EmbeddingCache(config.embedding.cache_path, encoder.dim)
    rows, _ = build_rows([ChunkedDocument(d, chunk_document(d, config.chunking)) for d in docs], encoder, cache, 64)
    cache.close()
    store = MilvusStore(config.milvus, encoder.dim)
    store.ensure_collection()
    store.upsert(rows)
    store.flush()
    store.close()
