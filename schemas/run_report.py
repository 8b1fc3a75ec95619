"""The run report: every input of a run has exactly one outcome in it (seen + history_versions = indexed +
unchanged + skipped + failed; deleted counts documents the source no longer has). `seen` counts the documents a
source listed (each once, at its current version), `history_versions` the past versions a run loaded beside them
(keep_history: those a git source's commits replaced), so that an unchanged source is seen the same on every run.
A source that fails as a whole is a failed source (`failed_sources`, its per-source status), not a failed
document. The vocabulary, shared with status, report and reconcile: docs/guarantees.md, "Counts"."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, is_dataclass, replace
from typing import Any, Literal, Protocol, runtime_checkable

from cairn.redact import redact

SOURCE_FAILURE = "*"  # the `document` of a failure that is the whole source's


@dataclass
class Failure:
    source: str
    document: str  # the input's locator (path, key, incident id) so a person can find it
    error: str
    policy: bool = False  # refused by a policy (an ACL wider than the source grants, no ACL), not broken


@dataclass
class Skipped:
    """An input that holds nothing to index (an empty file, front matter only): seen, not indexed, not failed."""

    source: str
    document: str
    reason: str
    read: bool = True  # False: skipped at this version by an earlier run, and not read again


@dataclass
class DocumentCounts:
    seen: int = 0
    indexed: int = 0
    unchanged: int = 0
    deleted: int = 0
    failed: int = 0
    skipped: int = 0  # nothing to index in them (seen + history_versions = indexed + unchanged + skipped + failed)
    history_versions: int = 0  # past versions loaded beside the current ones (keep_history), not `seen`


COUNTS = ("seen", "indexed", "unchanged", "deleted", "failed", "skipped", "history_versions")


@dataclass
class SourceReport:
    """One source's part of a run (flows/sync.py): what RunReport.close_source folds in."""

    documents: DocumentCounts = field(default_factory=DocumentCounts)
    sections: int = 0
    chunks: int = 0
    tokens: int = 0
    embeddings_computed: int = 0
    model_seconds: float = 0.0  # of the model computing them
    rows_written: int = 0
    failures: list[Failure] = field(default_factory=list)
    warnings: list[Failure] = field(default_factory=list)  # indexed, with a caveat (a PDF's scanned pages)
    skipped: list[Skipped] = field(default_factory=list)
    written_documents: dict[str, list[str]] = field(default_factory=dict)  # source -> document ids written
    # of the documents indexed again at a version the collection held: how many for each reason (index/plan.py
    # OUTDATED_WHY: a new version, access settings changed, recipe changed)
    reindexed: dict[str, int] = field(default_factory=dict)
    recipe_changes: list[str] = field(default_factory=list)  # what changed in the recipe, when it did

    def fail(self, source: str, document: str, error: str, policy: bool = False) -> None:
        """Count one failed input (`policy`: a policy refused it), or with `document` SOURCE_FAILURE the source's
        own failure, which is no document's (not in `documents.failed`); the message is stored without any URL's
        credentials."""
        if document != SOURCE_FAILURE:
            self.documents.failed += 1
        self.failures.append(Failure(source, redact(document), redact(error), policy))

    def skip(self, source: str, document: str, reason: str, read: bool = True) -> None:
        """Count one input with nothing to index (`read`: this run read it, else it was remembered)."""
        self.documents.skipped += 1
        self.skipped.append(Skipped(source, redact(document), redact(reason), read))

    def warn(self, source: str, document: str, warning: str) -> None:
        """Note a caveat about an indexed input (it counts as indexed, not failed)."""
        self.warnings.append(Failure(source, redact(document), redact(warning)))


JsonData = dict[str, object]  # a record as JSON data: what `cairn ingest --json` prints, key for key


@runtime_checkable
class _Record(Protocol):
    """A part of the report that says itself how it reads as JSON."""

    def to_dict(self) -> JsonData: ...


SourceStatus = Literal["ok", "partial", "failed"]


@dataclass
class SourceOutcome:
    """How one source went in a run (`RunReport.per_source`): ok, partial (some documents failed) or failed (the
    source as a whole, with its `error`), its document counts, its embeddings and its seconds. A field added here
    lands in the JSON after `seconds` (`to_dict`), `error` last."""

    status: SourceStatus
    documents: DocumentCounts = field(default_factory=DocumentCounts)
    embeddings_computed: int = 0
    model_seconds: float = 0.0  # rounded to the millisecond, as printed
    seconds: float = 0.0  # rounded to the millisecond, as printed
    # of the documents indexed again at a version the collection held, how many for each reason (not in the JSON
    # when none was)
    reindexed: dict[str, int] = field(default_factory=dict)
    error: str | None = None  # the source's failure (status "failed"), else None and not in the JSON

    @property
    def failed(self) -> bool:
        return self.status == "failed"

    def to_dict(self) -> JsonData:
        """`{"status", "seen", ..., "skipped", "embeddings_computed", "model_seconds", "seconds"[, "reindexed"][,
        "error"]}`."""
        data: JsonData = {}
        for name, value in _fields(self):
            if name == "documents":
                data.update(asdict(self.documents))
            elif name == "reindexed":
                if self.reindexed:
                    data[name] = dict(self.reindexed)
            elif name != "error":
                data[name] = value
        if self.error is not None:
            data["error"] = self.error
        return data

    @classmethod
    def from_dict(cls, data: JsonData) -> SourceOutcome:
        counts = {name: data[name] for name in COUNTS if name in data}
        rest = {k: v for k, v in data.items() if k not in counts}
        return cls(documents=DocumentCounts(**_ints(counts)), **_known(cls, rest))


Switch = Literal["pending", "done"]


@dataclass
class IndexReport:
    """The collection a run wrote and the one serving. During a rebuild beside the serving one, why (`rebuild`) and
    the switch: "pending" (`waiting_for`: the sources not yet built into it) or "done" (`dropped`: the collection
    it replaced, or None)."""

    collection: str
    serving: str
    rebuild: str | None = None
    switch: Switch | None = None
    waiting_for: list[str] = field(default_factory=list)  # with switch "pending"
    dropped: str | None = None  # with switch "done"

    @property
    def pending(self) -> bool:
        return self.switch == "pending"

    def to_dict(self) -> JsonData:
        """`{"collection", "serving"}`, during a rebuild with `"rebuild", "switch"` and `"waiting_for"` (pending) or
        `"dropped"` (done)."""
        data: JsonData = {"collection": self.collection, "serving": self.serving}
        if self.rebuild is None:
            return data
        data.update(rebuild=self.rebuild, switch=self.switch)
        if self.switch == "pending":
            data["waiting_for"] = list(self.waiting_for)
        elif self.switch == "done":
            data["dropped"] = self.dropped
        return data

    @classmethod
    def from_dict(cls, data: JsonData) -> IndexReport | None:
        return cls(**_known(cls, data)) if data else None


@dataclass
class QualitySummary:
    """The data-quality check of what a run wrote: passed or not, its report folder, the expectations that failed
    (`suite: column`) and its seconds."""

    success: bool
    report_dir: str
    failed: list[str] = field(default_factory=list)
    seconds: float = 0.0  # rounded to the millisecond

    def to_dict(self) -> JsonData:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: JsonData | None) -> QualitySummary | None:
        return cls(**_known(cls, data)) if data is not None else None


@dataclass
class RunReport:
    """A whole run: each source's part folded in as the source closes (close_source). `to_dict` is its JSON (what
    `cairn ingest --json` prints and a flow run returns) and `from_dict` reads it back: a field added here is in
    both, in its place, with nothing else to change for a plain value."""

    run_id: str
    documents: DocumentCounts = field(default_factory=DocumentCounts)
    sections: int = 0
    chunks: int = 0
    tokens: int = 0
    embeddings_computed: int = 0
    model_seconds: float = 0.0  # of the run's seconds, those the model spent computing its embeddings
    rows_written: int = 0
    seconds: float = 0.0
    failures: list[Failure] = field(default_factory=list)
    warnings: list[Failure] = field(default_factory=list)  # indexed, with a caveat (a PDF's scanned pages)
    skipped: list[Skipped] = field(default_factory=list)  # nothing to index in them, each with its reason
    sources: list[str] = field(default_factory=list)
    written_documents: dict[str, list[str]] = field(default_factory=dict)  # source -> document ids written
    quality: QualitySummary | None = None  # when a data-quality report was written
    per_source: dict[str, SourceOutcome] = field(default_factory=dict)  # source -> how it went
    index: IndexReport | None = None  # None: a store without generations (a unit test's InMemoryStore)
    reindexed: dict[str, int] = field(default_factory=dict)  # SourceReport.reindexed, summed over the sources
    unconfigured_sources: list[str] = field(default_factory=list)  # rows in the index, not in the configuration
    recipe_changes: dict[str, list[str]] = field(default_factory=dict)  # source -> what changed in its recipe

    @property
    def chunks_per_second(self) -> float:
        """Of the seconds as printed (to the millisecond), so that the JSON read back gives the same figure."""
        seconds = round(self.seconds, 3)
        return self.chunks / seconds if seconds > 0 else 0.0

    @property
    def failed_sources(self) -> list[str]:
        """Sources that failed as a whole (a failure naming no document, "*")."""
        return sorted({f.source for f in self.failures if f.document == SOURCE_FAILURE})

    def close_source(self, name: str, part: SourceReport, seconds: float = 0.0) -> SourceOutcome:
        """Fold one source's part in and record how that source went: ok, partial (some documents failed)
        or failed (the source as a whole, with its error), with its embeddings and its `seconds`."""
        for count in COUNTS:
            setattr(self.documents, count, getattr(self.documents, count) + getattr(part.documents, count))
        for total in ("sections", "chunks", "tokens", "embeddings_computed", "model_seconds", "rows_written"):
            setattr(self, total, getattr(self, total) + getattr(part, total))
        self.failures.extend(part.failures)
        self.warnings.extend(part.warnings)
        self.skipped.extend(part.skipped)
        for source, ids in part.written_documents.items():
            self.written_documents.setdefault(source, []).extend(ids)
        for reason, again in part.reindexed.items():
            self.reindexed[reason] = self.reindexed.get(reason, 0) + again
        if part.recipe_changes:
            self.recipe_changes[name] = list(part.recipe_changes)
        self.sources.append(name)
        errors = [f.error for f in part.failures if f.document == SOURCE_FAILURE]
        outcome = SourceOutcome(
            status="failed" if errors else "partial" if part.failures else "ok",
            documents=replace(part.documents),
            embeddings_computed=part.embeddings_computed,
            model_seconds=round(part.model_seconds, 3),
            seconds=round(seconds, 3),
            reindexed=dict(part.reindexed),
            error=errors[0] if errors else None,
        )
        self.per_source[name] = outcome
        return outcome

    def to_dict(self) -> JsonData:
        """The report as JSON data: what `cairn ingest --json` prints and the flow run returns (without
        `written_documents`; with `failed_sources` and `chunks_per_second`, the seconds to the millisecond)."""
        data = {name: _plain(value) for name, value in _fields(self) if name != "written_documents"}
        data.update(seconds=round(self.seconds, 3), model_seconds=round(self.model_seconds, 3))
        if self.index is None:
            data["index"] = {}
        data["failed_sources"] = self.failed_sources
        data["chunks_per_second"] = round(self.chunks_per_second, 2)
        return data

    @classmethod
    def from_dict(cls, data: JsonData) -> RunReport:
        """A run report read back from its JSON (a Prefect flow run's result, `SourcesFailed.report`)."""
        rest = {k: v for k, v in data.items() if k not in ("failed_sources", "chunks_per_second")}
        per_source = _mapping(rest.pop("per_source", {}))
        return cls(
            **_known(cls, rest, ("documents", "failures", "warnings", "skipped", "quality", "index")),
            documents=DocumentCounts(**_ints(_mapping(rest.get("documents", {})))),
            failures=[Failure(**_mapping(f)) for f in _list(rest.get("failures"))],
            warnings=[Failure(**_mapping(f)) for f in _list(rest.get("warnings"))],
            skipped=[Skipped(**_mapping(s)) for s in _list(rest.get("skipped"))],
            quality=QualitySummary.from_dict(_mapping(rest["quality"]) if rest.get("quality") else None),
            per_source={name: SourceOutcome.from_dict(_mapping(part)) for name, part in per_source.items()},
            index=IndexReport.from_dict(_mapping(rest.get("index") or {})),
        )


def _fields(record: object) -> list[tuple[str, object]]:
    """A dataclass's fields in their order, with their values."""
    return [(f.name, getattr(record, f.name)) for f in fields(record)]  # type: ignore[arg-type]


def _plain(value: object) -> object:
    """A field's value as JSON data: a record by its own `to_dict`, any other dataclass as a dict, recursively."""
    if isinstance(value, _Record):
        return value.to_dict()
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def _known(record: type, data: JsonData, besides: tuple[str, ...] = ()) -> dict[str, Any]:
    """The keys of `data` that are fields of `record` (and not among `besides`): a key a newer Cairn wrote is
    left out rather than refused."""
    names = {f.name for f in fields(record)} - set(besides)
    return {k: v for k, v in data.items() if k in names}


def _mapping(value: object) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"a run report part is not a JSON object: {type(value).__name__}")
    return value


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _ints(counts: dict[str, Any]) -> dict[str, int]:
    return {name: int(value) for name, value in counts.items() if name in COUNTS}
