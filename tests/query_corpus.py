"""A small corpus of hand-made runbooks as collection rows, for the tests of the query side that run on the
in-memory reader (tests/unit/test_query_retrieve.py) and of the two readers against each other
(tests/integration/test_index_memory.py)."""

from __future__ import annotations

from pathlib import Path

from cairn.chunkers import chunk_document
from cairn.index.cache import EmbeddingCache
from cairn.index.rows import ChunkedDocument, build_rows
from cairn.schemas import ContentType, Principal, SourceDocument, SourceType, stable_id
from cairn.schemas.config import ChunkingConfig
from cairn.schemas.rows import ChunkRow
from tests.encoders import HashingEncoder

FAILOVER = """# Ledger failover

## Promote the replica

Promote the ledger-db replica with pg_ctl promote when the primary is lost, then point the ledger service at the
new primary and confirm writes succeed. {pad}

## Verify replication

Check pg_stat_replication on the new primary: every standby must stream again before the failover is over. {pad}
"""
INVOICE = """# Invoice worker

## Restart the worker

Restart the invoice worker with systemctl restart invoice-worker and watch the queue drain below 100. {pad}
"""
SECRET = """# Card vault rotation

## Rotate the vault key

Rotate the card vault key with the vault rotate command; only the payments team may run it. {pad}
"""
PAD = "This step is part of the runbook and is kept short on purpose for the test. " * 8
DAY = 86_400
T0 = 1_767_225_600  # 2026-01-01


def document(
    locator: str, title: str, body: str, tenant: str = "acme", acl: tuple[str, ...] = ("sre",), **fields
) -> SourceDocument:
    values = dict(
        document_id=stable_id("wiki", tenant, locator),
        source_name=f"{tenant}-wiki",
        source_type=SourceType.WIKI,
        source_uri=f"file:///wiki/{locator}",
        locator=locator,
        title=title,
        content=body.format(pad=PAD),
        tenant_id=tenant,
        access_control_list=list(acl),
        content_type=ContentType.RUNBOOK,
        version_hash=stable_id(body),
        created_at=T0,
        updated_at=T0,
        temporal_start=T0,
    )
    values.update(fields)
    return SourceDocument(**values)  # type: ignore[arg-type]


def corpus_rows(folder: Path) -> list[ChunkRow]:
    """The rows of the corpus, built by the real chunker and row builder, embedded by the hashing encoder (its
    cache in `folder`): two runbooks of acme's SRE (one with a past version), one of payments, one of globex."""
    encoder = HashingEncoder()
    old_invoice = document(
        "invoice.md",
        "Invoice worker",
        INVOICE.replace("systemctl restart invoice-worker", "the legacy supervisor script"),
        is_current=False,
        temporal_start=T0 - 30 * DAY,
        temporal_end=T0,
        updated_at=T0 - 30 * DAY,
    )
    docs = [
        document("ledger-failover.md", "Ledger failover", FAILOVER, service_name="ledger-db", doc_tag="ledger"),
        document("invoice.md", "Invoice worker", INVOICE, service_name="invoice"),
        old_invoice,
        document("vault.md", "Card vault rotation", SECRET, acl=("payments",)),
        document("ledger-failover.md", "Ledger failover", FAILOVER, tenant="globex"),
    ]
    cache = EmbeddingCache(folder / "cache.sqlite", encoder.dim)
    try:
        batch = [ChunkedDocument(doc, chunk_document(doc, ChunkingConfig())) for doc in docs]
        rows, stats = build_rows(batch, encoder, cache, 32)
    finally:
        cache.close()
    assert not stats.failed
    return rows


SRE = Principal("acme", ["sre"])
