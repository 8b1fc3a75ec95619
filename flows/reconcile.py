"""`cairn reconcile`: what the sources yield against what the collection holds, and the repair.

The comparison is discovery (cheap, nothing parsed) against the ledger read from the collection
(index/ledger.py); nothing else is trusted. The repair is an ordinary ingest with cleanup "full", which
re-indexes every document that is not exactly and completely its current version and removes the rest.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from cairn.errors import NoCollection
from cairn.flows.discovery import access_fingerprint
from cairn.index.generations import open_serving
from cairn.index.ledger import collection_ledger
from cairn.index.milvus import CollectionReader
from cairn.index.plan import plan_sync
from cairn.schemas.config import CairnConfig, S3Config
from cairn.schemas.source_config import SourceConfig
from cairn.sources import DiscoveryFailure, SourceError, open_source


@dataclass
class Drift:
    source: str
    documents_in_source: int = 0
    documents_indexed: int = 0
    rows_current: int = 0
    missing: list[str] = field(default_factory=list)  # yielded by the source, not in the collection
    outdated: list[str] = field(default_factory=list)  # indexed, but not the version the source holds
    incomplete: dict[str, list[str]] = field(default_factory=dict)  # locator/document -> problems
    stale: list[str] = field(default_factory=list)  # in the collection, no longer in the source
    orphan_rows: int = 0
    unreadable: list[str] = field(default_factory=list)  # seen by discovery but unreadable (not drift)
    error: str = ""

    @property
    def clean(self) -> bool:
        return not (self.missing or self.outdated or self.incomplete or self.stale or self.orphan_rows or self.error)

    def to_dict(self) -> dict:
        return dict(asdict(self), clean=self.clean)


def check_source(source_config: SourceConfig, reader: CollectionReader, s3: S3Config | None = None) -> Drift:
    """Discovery against the ledger, through the same plan an ingest makes (index.sync.plan_sync)."""
    drift = Drift(source_config.name)
    try:
        source = open_source(source_config, {}, s3=s3)  # a full listing: a cursor would hide documents
        items = list(source.discover())
    except SourceError as exc:
        drift.error = str(exc)
        return drift
    refs = [i for i in items if not isinstance(i, DiscoveryFailure)]
    unreadable = [i for i in items if isinstance(i, DiscoveryFailure)]
    ledger = collection_ledger(reader, source_config.name)
    plan = plan_sync(
        refs,
        ledger,
        keep_ids={i.document_id for i in unreadable},
        cleanup=source.complete,
        access=access_fingerprint(source_config),
    )
    locator = {r.document_id: r.locator for r in refs}
    drift.unreadable = [i.locator for i in unreadable]
    drift.documents_in_source = len(items)
    drift.documents_indexed = len(ledger)
    drift.rows_current = sum(len(d.rows) for d in ledger.values())
    drift.orphan_rows = sum(len(d.orphans) for d in ledger.values())
    drift.missing = [r.locator for r in plan.missing]
    drift.outdated = [r.locator for r in plan.outdated]
    drift.incomplete = {locator[doc]: problems for doc, problems in plan.incomplete.items()}
    drift.stale = plan.stale_document_ids
    return drift


def reconcile(config: CairnConfig, source: str | None = None) -> list[Drift]:
    selected = [config.source(source)] if source else config.sources
    try:
        reader = open_serving(config.milvus, create=True)  # what the name serves now (index/generations.py)
    except NoCollection:
        missing = f"no collection {config.milvus.collection!r}: run `cairn ingest`"
        return [Drift(s.name, error=missing) for s in selected]
    with reader:
        return [check_source(s, reader, config.s3) for s in selected]
