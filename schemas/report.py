"""The run report: every input of a run has exactly one outcome in it."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class Failure:
    source: str
    document: str  # the input's locator (path, key, incident id) so a person can find it
    error: str


@dataclass
class DocumentCounts:
    seen: int = 0
    indexed: int = 0
    unchanged: int = 0
    deleted: int = 0
    failed: int = 0


@dataclass
class RunReport:
    run_id: str
    documents: DocumentCounts = field(default_factory=DocumentCounts)
    sections: int = 0
    chunks: int = 0
    tokens: int = 0
    embeddings_computed: int = 0
    rows_written: int = 0
    seconds: float = 0.0
    failures: list[Failure] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    written_documents: dict[str, list[str]] = field(default_factory=dict)  # source -> document ids written
    # {"success", "report_dir", "failed": [...], "seconds"} when a data-quality report was written
    quality: dict | None = None

    @property
    def chunks_per_second(self) -> float:
        return self.chunks / self.seconds if self.seconds > 0 else 0.0

    def fail(self, source: str, document: str, error: str) -> None:
        self.documents.failed += 1
        self.failures.append(Failure(source, document, error))

    def merge(self, other: "RunReport") -> None:
        for name in ("seen", "indexed", "unchanged", "deleted", "failed"):
            setattr(self.documents, name, getattr(self.documents, name) + getattr(other.documents, name))
        for name in ("sections", "chunks", "tokens", "embeddings_computed", "rows_written"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.failures.extend(other.failures)
        for source, ids in other.written_documents.items():
            self.written_documents.setdefault(source, []).extend(ids)

    def to_dict(self) -> dict:
        data = asdict(self)
        data.pop("written_documents")
        data["seconds"] = round(self.seconds, 3)
        data["chunks_per_second"] = round(self.chunks_per_second, 2)
        return data
