"""The run report: every input of a run has exactly one outcome in it (seen = indexed + unchanged + skipped +
failed; deleted counts documents the source no longer has)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

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
    skipped: int = 0  # nothing to index in them (seen = indexed + unchanged + skipped + failed)


COUNTS = ("seen", "indexed", "unchanged", "deleted", "failed", "skipped")


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
        """Count one failed input (`policy`: a policy refused it); the message is stored without any URL's
        credentials."""
        self.documents.failed += 1
        self.failures.append(Failure(source, redact(document), redact(error), policy))

    def skip(self, source: str, document: str, reason: str, read: bool = True) -> None:
        """Count one input with nothing to index (`read`: this run read it, else it was remembered)."""
        self.documents.skipped += 1
        self.skipped.append(Skipped(source, redact(document), redact(reason), read))

    def warn(self, source: str, document: str, warning: str) -> None:
        """Note a caveat about an indexed input (it counts as indexed, not failed)."""
        self.warnings.append(Failure(source, redact(document), redact(warning)))


@dataclass
class RunReport:
    """A whole run: each source's part folded in as the source closes (close_source)."""

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
    # {"success", "report_dir", "failed": [...], "seconds"} when a data-quality report was written
    quality: dict[str, Any] | None = None
    per_source: dict[str, dict[str, Any]] = field(default_factory=dict)  # source -> {"status", counts, "error"}
    # the collection written and the one serving; during a rebuild "rebuild" (why) and "switch": "pending"
    # (with "waiting_for": sources not yet built into it) or "done" (with "dropped": the collection it replaced)
    index: dict[str, Any] = field(default_factory=dict)
    reindexed: dict[str, int] = field(default_factory=dict)  # SourceReport.reindexed, summed over the sources
    unconfigured_sources: list[str] = field(default_factory=list)  # rows in the index, not in the configuration
    recipe_changes: dict[str, list[str]] = field(default_factory=dict)  # source -> what changed in its recipe

    @property
    def chunks_per_second(self) -> float:
        return self.chunks / self.seconds if self.seconds > 0 else 0.0

    @property
    def failed_sources(self) -> list[str]:
        """Sources that failed as a whole (a failure naming no document, "*")."""
        return sorted({f.source for f in self.failures if f.document == SOURCE_FAILURE})

    def close_source(self, name: str, part: SourceReport, seconds: float = 0.0) -> None:
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
        status = "failed" if errors else "partial" if part.failures else "ok"
        self.per_source[name] = {
            "status": status,
            **asdict(part.documents),
            "embeddings_computed": part.embeddings_computed,
            "model_seconds": round(part.model_seconds, 3),
            "seconds": round(seconds, 3),
            **({"reindexed": dict(part.reindexed)} if part.reindexed else {}),
            **({"error": errors[0]} if errors else {}),
        }

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON data: what `cairn ingest --json` prints and the flow run returns."""
        data = asdict(self)
        data.pop("written_documents")
        data["failed_sources"] = self.failed_sources
        data["seconds"] = round(self.seconds, 3)
        data["model_seconds"] = round(self.model_seconds, 3)
        data["chunks_per_second"] = round(self.chunks_per_second, 2)
        return data
