"""retrieve(): hybrid search over child rows, tenant+ACL pre-filtered inside Milvus, promoted to parents.

    from query import Retriever, Principal
    retriever = Retriever.from_config("data/cairn.toml")
    result = retriever.retrieve("how do I fail over ledger-db", Principal("acme", ["sre"]), k=5)
    for hit in result.hits:
        print(hit.score, hit.citation)
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pymilvus import AnnSearchRequest, MilvusClient, RRFRanker

from embedding import Encoder, load_encoder
from schemas import ChunkType, Principal, from_epoch
from schemas.collection import OUTPUT_FIELDS, SPARSE_FIELD, access_filter, in_list, quote
from schemas.config import CairnConfig, MilvusConfig, QueryConfig, load_config


class RetrievalError(RuntimeError):
    """The index cannot be queried; the message says what to fix."""


@dataclass
class Hit:
    """A parent section, ranked by its best-matching child chunks."""

    chunk_id: str  # the parent section's row
    document_id: str
    section_id: str
    breadcrumbs: list[str]
    title: str
    source_uri: str
    score: float
    text: str
    citation: str
    version_hash: str
    updated_at: str | None
    doc_tag: str
    matched_chunk_ids: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class RetrievalResult:
    query: str
    hits: list[Hit]
    diagnostics: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"query": self.query, "results": [h.to_dict() for h in self.hits], "diagnostics": self.diagnostics}


def time_filter(as_of: int | None) -> str:
    """Current rows by default; with as_of (epoch seconds) the rows valid then, history included."""
    if as_of is None:
        return "is_current == true"
    return f"temporal_start <= {int(as_of)} and temporal_end > {int(as_of)}"


def one_version_per_document(rows: list[dict]) -> set[str]:
    """While a document is being replaced both versions are briefly current; an answer must never mix
    them. Returns the chunk ids to keep: per document, only the rows of its newest version."""
    newest: dict[str, tuple[int, str]] = {}
    for row in rows:
        key = (int(row["temporal_start"]), row["version_hash"])
        if row["document_id"] not in newest or key > newest[row["document_id"]]:
            newest[row["document_id"]] = key
    return {r["chunk_id"] for r in rows if (int(r["temporal_start"]), r["version_hash"]) == newest[r["document_id"]]}


def citation(row: dict) -> str:
    crumbs = list(row["breadcrumbs"])
    if crumbs and crumbs[0] == row["title"]:
        crumbs = crumbs[1:]  # the title is already said once
    where = " › ".join([row["title"], *crumbs])
    updated = from_epoch(row["updated_at"])
    date = updated.date().isoformat() if updated else "unknown"
    extra = row.get("extra") or {}
    pages = ""
    if extra.get("page_start"):
        first, last = extra["page_start"], extra.get("page_end", extra["page_start"])
        pages = f", p. {first}" if first == last else f", pp. {first}-{last}"
    return f"{where} (v{row['version_hash'][:7]}, updated {date}{pages}) {row['source_uri']}#{row['section_id']}"


def connect(config: MilvusConfig) -> MilvusClient:
    if config.is_lite and not Path(config.uri).exists():
        raise RetrievalError(f"no index at {config.uri}: run `cairn ingest` first (or set [milvus] uri)")
    try:
        client = MilvusClient(uri=config.uri, token=config.token, timeout=30)
    except Exception as exc:
        raise RetrievalError(f"cannot open Milvus at {config.uri}: {str(exc).splitlines()[0][:300]}") from None
    if not client.has_collection(config.collection):
        raise RetrievalError(f"no collection {config.collection!r} at {config.uri}: run `cairn ingest` first")
    client.load_collection(config.collection)
    return client


class Retriever:
    def __init__(self, milvus: MilvusConfig, settings: QueryConfig, encoder: Encoder, client: MilvusClient | None = None) -> None:
        self.milvus = milvus
        self.settings = settings
        self.encoder = encoder
        self.collection = milvus.collection
        self.client = client or connect(milvus)

    @classmethod
    def from_config(cls, config: CairnConfig | str | Path | None = None) -> "Retriever":
        if not isinstance(config, CairnConfig):
            config = load_config(config)
        return cls(config.milvus, config.query, load_encoder(config.embedding.model))

    def retrieve(
        self, text: str, principal: Principal, k: int | None = None, doc_tag: str | None = None, as_of: int | None = None
    ) -> RetrievalResult:
        """Parent sections for `text` that `principal` may read; `as_of` (epoch seconds) answers with what
        was valid then (superseded versions kept as history included)."""
        if not isinstance(principal, Principal):
            raise TypeError("retrieve() needs a Principal(tenant, groups)")
        k = k or self.settings.k
        timings: dict[str, float] = {}
        started = time.perf_counter()
        vector = self.encoder.encode([text])[0].tolist()
        timings["embed_ms"] = (time.perf_counter() - started) * 1000

        allowed = access_filter(principal.tenant, principal.groups)
        allowed = f"{allowed} and {time_filter(as_of)}"
        expr = f"{allowed} and chunk_type == {quote(ChunkType.CHILD.value)}"
        if doc_tag:
            expr += f" and doc_tag == {quote(doc_tag)}"
        limit = max(self.settings.candidates, k * 4)
        requests = [
            AnnSearchRequest(data=[vector], anns_field="full_text_embedding", param={"ef": limit * 2}, limit=limit, expr=expr),
            AnnSearchRequest(data=[vector], anns_field="abstract_embedding", param={"ef": limit * 2}, limit=limit, expr=expr),
            AnnSearchRequest(data=[text], anns_field=SPARSE_FIELD, param={}, limit=limit, expr=expr),
        ]
        mark = time.perf_counter()
        found = self.client.hybrid_search(
            self.collection,
            requests,
            ranker=RRFRanker(self.settings.rrf_k),
            limit=limit,
            output_fields=["parent_chunk_id"],
        )[0]
        timings["search_ms"] = (time.perf_counter() - mark) * 1000

        # Parent promotion: a section scores as its best child; children keep their rank order.
        best: dict[str, float] = {}
        matched: dict[str, list[str]] = {}
        for child in found:
            parent = child["entity"]["parent_chunk_id"]
            best.setdefault(parent, float(child["distance"]))
            matched.setdefault(parent, []).append(child["chunk_id"])
        top = sorted(best, key=lambda p: -best[p])[:k]
        mark = time.perf_counter()
        parents = self._fetch(top, allowed)
        keep = one_version_per_document(list(parents.values()))
        parents = {pid: row for pid, row in parents.items() if pid in keep}
        timings["fetch_ms"] = (time.perf_counter() - mark) * 1000
        hits = [
            Hit(
                chunk_id=pid,
                document_id=row["document_id"],
                section_id=row["section_id"],
                breadcrumbs=list(row["breadcrumbs"]),
                title=row["title"],
                source_uri=row["source_uri"],
                score=round(best[pid], 6),
                text=row["text"],
                citation=citation(row),
                version_hash=row["version_hash"],
                updated_at=(from_epoch(row["updated_at"]).isoformat() if from_epoch(row["updated_at"]) else None),
                doc_tag=row["doc_tag"],
                matched_chunk_ids=matched[pid],
            )
            for pid in top
            if (row := parents.get(pid)) is not None
        ]
        timings["total_ms"] = (time.perf_counter() - started) * 1000
        return RetrievalResult(text, hits, {"candidates": len(found), "timings": {k: round(v, 2) for k, v in timings.items()}})

    def _fetch(self, chunk_ids: list[str], allowed: str) -> dict[str, dict]:
        if not chunk_ids:
            return {}
        # ACL re-checked on the parents themselves: nothing leaves without passing the filter.
        rows = self.client.query(
            self.collection,
            filter=f"{in_list('chunk_id', chunk_ids)} and {allowed}",
            output_fields=list(OUTPUT_FIELDS),
        )
        return {row["chunk_id"]: row for row in rows}

    def close(self) -> None:
        self.client.close()
