"""`cairn reconcile`: what the sources yield against what the collection holds, and the repair.

The comparison is discovery (cheap, nothing parsed; a folder's unchanged files not even read, by the version
memo an ingest keeps) against the ledger (index/ledger.py): read from the derived ledger (index/derived.py) when
that is in step with the collection, else from the collection itself. With `scan` (and always with --fix) the
derived ledger is first compared with the collection row by row, which catches what the marks cannot: rows
changed behind Cairn's back; and every file is read. The repair rebuilds a derived ledger that differs
(`rebuild_ledger`), then runs an ordinary ingest with cleanup "full", which re-indexes every document that is
not exactly and completely its current version and removes the rest.

Why a document the source lists is not in the collection comes from what the last ingest did with it (its outcome
in the state file, index/outcomes.py), when that was at the version the source lists now and under the source's
present access settings: skipped (nothing to index in it: not drift), refused by a policy (a page granting itself
groups its source does not, no ACL; a removal the mass-delete guard held back: not drift either, the collection is
as the policy wants it until the operator decides), failed (drift, with the last reason: the next ingest tries
again), or none of these (drift: not ingested yet, e.g. added since the last run).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from cairn.flows.concurrency import index_writer
from cairn.flows.discovery import access_fingerprint, source_origin
from cairn.index.derived import DerivedLedger, in_step_ledger
from cairn.index.generations import open_serving
from cairn.index.ledger import IndexedDocument, collection_ledger
from cairn.index.outcomes import Outcome
from cairn.index.plan import Expected, plan_sync
from cairn.index.reader import CollectionReader
from cairn.index.state import SavedVersions, SourceState
from cairn.index.store import MilvusStore
from cairn.schemas.config import CairnConfig, ChunkingConfig, S3Config
from cairn.schemas.recipe import recipe_fingerprint
from cairn.schemas.row_links import stamp_key
from cairn.schemas.source_config import SourceConfig
from cairn.sources import DiscoveryFailure, SourceError, VersionMemo, open_source


@dataclass
class Drift:
    source: str
    documents_in_source: int = 0
    documents_indexed: int = 0
    rows_current: int = 0
    missing: list[str] = field(default_factory=list)  # yielded by the source, not in the collection
    failed: dict[str, str] = field(default_factory=dict)  # of `missing`: what failed at the last ingest, and why
    outdated: list[str] = field(default_factory=list)  # indexed, but not the version the source holds
    incomplete: dict[str, list[str]] = field(default_factory=dict)  # locator/document -> problems
    stale: list[str] = field(default_factory=list)  # in the collection, no longer in the source
    orphan_rows: int = 0
    unreadable: list[str] = field(default_factory=list)  # seen by discovery but unreadable (not drift)
    refused: dict[str, str] = field(default_factory=dict)  # a policy refused it at the last ingest (not drift): why
    skipped: dict[str, str] = field(default_factory=dict)  # nothing to index in it (not drift): why
    error: str = ""

    @property
    def clean(self) -> bool:
        return not (self.missing or self.outdated or self.incomplete or self.stale or self.orphan_rows or self.error)

    def to_dict(self) -> dict:
        return dict(asdict(self), clean=self.clean)


@dataclass
class LedgerCheck:
    """The derived ledger against the collection."""

    in_step: bool = False  # the marks agree (index/derived.py)
    scanned: bool = False  # compared row by row too
    differing: int = 0  # rows the file and the collection disagree on (scanned)
    examples: list[str] = field(default_factory=list)  # a few of their chunk ids

    @property
    def trusted(self) -> bool:
        return self.in_step and not self.differing

    def to_dict(self) -> dict:
        return dict(asdict(self), trusted=self.trusted)


@dataclass
class Reconciliation:
    drifts: list[Drift]
    ledger: LedgerCheck
    unconfigured: list[str] = field(default_factory=list)  # sources with rows the configuration does not name

    @property
    def clean(self) -> bool:
        return all(d.clean for d in self.drifts) and not self.unconfigured


CHECK_FIELDS = ["chunk_id", "source_name", "document_id", "chunk_type", "is_current", "version_hash"]


def compare_rows(derived: DerivedLedger, reader: CollectionReader, check: LedgerCheck) -> None:
    """Every row of the collection against the file: one scan of the collection, one pass over the file."""
    kept = derived.entries()
    differing: list[str] = []
    for row in reader.iterate("", CHECK_FIELDS):
        entry = kept.pop(row.chunk_id, None)
        have = (row.source_name, row.document_id, row.chunk_type, bool(row.is_current), row.version_hash)
        if entry != have:
            differing.append(row.chunk_id)
    differing.extend(kept)  # in the file, not in the collection
    check.scanned, check.differing, check.examples = True, len(differing), sorted(differing)[:5]


def check_source(
    source_config: SourceConfig,
    ledger_of: Callable[[str], dict[str, IndexedDocument]],
    s3: S3Config | None = None,
    memo: VersionMemo | None = None,
    outcomes: dict[str, Outcome] | None = None,
    chunking: ChunkingConfig | None = None,
) -> Drift:
    """Discovery against the ledger, through the same plan an ingest makes (index.sync.plan_sync). With `memo`
    (a folder source's version memo, index/state.py), a file whose stat did not move is not read again; with
    `outcomes` (what the last ingest did with the documents the collection lacks), each says why; with `chunking`,
    a document whose rows another recipe made (schemas/recipe.py) is outdated."""
    drift = Drift(source_config.name)
    try:
        source = open_source(source_config, {}, s3=s3, memo=memo)  # a full listing: a cursor would hide documents
        items = list(source.discover())
    except SourceError as exc:
        drift.error = str(exc)
        return drift
    refs = [i for i in items if not isinstance(i, DiscoveryFailure)]
    unreadable = [i for i in items if isinstance(i, DiscoveryFailure)]
    ledger = ledger_of(source_config.name)
    access, outcomes = access_fingerprint(source_config), outcomes or {}
    plan = plan_sync(
        refs,
        ledger,
        keep_ids={i.document_id for i in unreadable},
        cleanup=source.complete,
        expected=Expected(
            None
            if chunking is None
            else stamp_key(access, recipe_fingerprint(source_config, chunking), source_origin(source_config)),
            {doc: o.version for doc, o in outcomes.items() if o.kind == "skipped"},
        ),
    )
    locator = {r.document_id: r.locator for r in refs}
    drift.unreadable = [i.locator for i in unreadable]
    drift.documents_in_source = len(items)
    drift.documents_indexed = len(ledger)
    drift.rows_current = sum(len(d.rows) for d in ledger.values())
    drift.orphan_rows = sum(len(d.orphans) for d in ledger.values())
    drift.skipped = {r.locator: outcomes[r.document_id].reason for r in plan.skipped}
    for ref in plan.missing:
        last = outcomes.get(ref.document_id)
        if last is None or last.version != ref.version_hash or last.access != access:
            drift.missing.append(ref.locator)  # not ingested yet (at this version, under these settings)
        elif last.kind == "refused":
            drift.refused[ref.locator] = last.reason
        else:
            drift.missing.append(ref.locator)
            drift.failed[ref.locator] = last.reason
    drift.outdated = [r.locator for r in plan.outdated]
    drift.incomplete = {locator[doc]: problems for doc, problems in plan.incomplete.items()}
    for doc in plan.stale_document_ids:
        last = outcomes.get(doc)
        if last is not None and last.kind == "refused" and not last.version:  # a removal the guard held back
            drift.refused[doc] = last.reason
        else:
            drift.stale.append(doc)
    return drift


def reconcile(config: CairnConfig, source: str | None = None, scan: bool = False) -> Reconciliation:
    """Each selected source against the ledger, a folder's files read only where their stat moved since the last
    ingest (its version memo, as an ingest reads them); `scan`: the derived ledger against the collection first,
    and every file read."""
    selected = [config.source(source)] if source else config.sources
    memos = source_memos(config, selected) if not scan else {}
    outcomes = source_outcomes(config, selected)
    # What the name serves now (index/generations.py); before any ingest, StoreError ("no index: run `cairn ingest`
    # first"): nothing is created, and there is nothing to compare (exit 2, as status and report).
    reader = open_serving(config.milvus)
    with reader, in_step_ledger(config.ledger_folder, reader) as derived:
        check = LedgerCheck(in_step=derived is not None)
        if scan and derived is not None:
            compare_rows(derived, reader, check)

        def ledger_of(name: str) -> dict[str, IndexedDocument]:
            if derived is not None and check.trusted:
                return derived.ledger(name)
            return collection_ledger(reader, name)

        drifts = [
            check_source(s, ledger_of, config.s3, memos.get(s.name), outcomes.get(s.name), config.chunking)
            for s in selected
        ]
        unconfigured = [] if source else unconfigured_sources(config, reader, derived if check.trusted else None)
        return Reconciliation(drifts, check, unconfigured)


def unconfigured_sources(config: CairnConfig, reader: CollectionReader, derived: DerivedLedger | None) -> list[str]:
    """The sources with rows in the collection that the configuration does not name (they still answer queries
    until `cairn drop --source NAME`): from the derived ledger's index when in step, else one scan."""
    held = derived.sources() if derived is not None else {r.source_name for r in reader.iterate("", ["source_name"])}
    return sorted(held - {s.name for s in config.sources})


def source_memos(config: CairnConfig, selected: list[SourceConfig]) -> dict[str, SavedVersions]:
    """The serving collection's version memo of each selected source, read-only (never saved here); none when
    there is no state file yet."""
    if not Path(config.state_path).is_file():
        return {}
    state = SourceState(config.state_path, config.milvus.identity)  # the serving collection's (scope "")
    try:
        return {s.name: state.versions(s.name) for s in selected}
    finally:
        state.close()


def source_outcomes(config: CairnConfig, selected: list[SourceConfig]) -> dict[str, dict[str, Outcome]]:
    """What the last ingest of the serving collection did with each selected source's documents it lacks (none
    when there is no state file yet)."""
    if not Path(config.state_path).is_file():
        return {}
    state = SourceState(config.state_path, config.milvus.identity)
    try:
        return {s.name: state.outcomes(s.name).all() for s in selected}
    finally:
        state.close()


def rebuild_ledger(config: CairnConfig, wait_seconds: float = 0.0) -> None:
    """Rebuild the serving collection's derived ledger from the collection, holding the writer slot."""
    from cairn.embedding import encoder_for

    dim = encoder_for(config.embedding).dim
    with index_writer(config.milvus, wait_seconds), open_serving(config.milvus) as reader:
        with DerivedLedger.open(config.ledger_folder, reader.config) as derived:
            MilvusStore(reader.config, dim, reader.connection, derived).bring_in_step(force=True)
