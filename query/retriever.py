"""retrieve(): the query pipeline, one small switchable step at a time; this file does the Milvus I/O.

    from cairn.query import Retriever, Principal
    retriever = Retriever.from_config("data/cairn.toml")
    result = retriever.retrieve("how do I fail over ledger-db", Principal("acme", ["sre"]), k=5)
    for hit in result.hits:
        print(hit.score, hit.citation)
    context = "\\n\\n".join(block.text for block in result.blocks)

Steps (each off with `[query] steps = { name = false }`, see schemas.config.QUERY_STEPS): gate -> transform ->
hybrid search (dense full text, dense abstract, BM25; tenant + ACL + time pre-filter inside Milvus) ->
fusion -> floors (+ exact-term rescue) -> second pass -> promotion to sections -> sparse-document recall ->
dominance -> diversity -> parents fetched (ACL re-checked) -> expansion -> packing -> citations ->
confidence + gaps -> one telemetry record.
"""

from __future__ import annotations

import copy
import json
import logging
import time
from pathlib import Path

import numpy as np
from pymilvus.exceptions import MilvusException

from cairn.embedding import Encoder, query_encoder_for
from cairn.embedding.model import cosine_scale
from cairn.errors import NoCollection, RetrievalError, StoreError
from cairn.index.generations import open_serving
from cairn.index.milvus import CollectionReader, Connection
from cairn.query import confidence as conf
from cairn.query.citations import citation, deep_link
from cairn.query.filters import ACCESS_FIELDS, Access, search_expr
from cairn.query.floors import Floors, apply_floors, wants_second_pass
from cairn.query.fusion import combined, fuse, leg_weights
from cairn.query.gate import GUIDANCE, gate
from cairn.query.packing import PackItem, newest_per_section, pack
from cairn.query.selection import (
    SparseDocLimits,
    by_continuity,
    diversify,
    dominant_document,
    promote,
    sparse_doc_recall,
)
from cairn.query.serving import ServedCollection
from cairn.query.transform import load_transform, seeds
from cairn.query.types import Candidate, Hit, RetrievalResult
from cairn.schemas import Principal, from_epoch
from cairn.schemas.collection import OUTPUT_FIELDS
from cairn.schemas.config import CairnConfig, MilvusConfig, QueryConfig, load_config
from cairn.schemas.row_links import ParentLinks

log = logging.getLogger("cairn.query")
CHILD_FIELDS = [
    "parent_chunk_id",
    "document_id",
    "section_id",
    "section_order",
    "title",
    "breadcrumbs",
    "text",
    "token_count",
]
NO_RESULTS = "No relevant documents were found for this question in what you can access."


def one_version_per_document(rows: list[dict]) -> set[str]:
    """While a document is being replaced both versions are briefly current; an answer must never mix
    them. Returns the chunk ids to keep: per document, only the rows of its newest version."""
    newest: dict[str, tuple[int, str]] = {}
    for row in rows:
        key = (int(row["temporal_start"]), row["version_hash"])
        if row["document_id"] not in newest or key > newest[row["document_id"]]:
            newest[row["document_id"]] = key
    return {r["chunk_id"] for r in rows if (int(r["temporal_start"]), r["version_hash"]) == newest[r["document_id"]]}


def connect(config: MilvusConfig) -> CollectionReader:
    """The query side's reader of the generation the configured name serves (RetrievalError naming what to fix)."""
    try:
        return open_serving(config)
    except NoCollection:
        raise RetrievalError(f"no collection {config.collection!r} at {config.uri}: run `cairn ingest` first") from None
    except StoreError as exc:
        raise RetrievalError(str(exc)) from None


class _Clock:
    def __init__(self) -> None:
        self.started = self.mark = time.perf_counter()
        self.ms: dict[str, float] = {}

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.ms[stage] = round(self.ms.get(stage, 0.0) + (now - self.mark) * 1000, 2)
        self.mark = now

    def total(self) -> dict[str, float]:
        return {**self.ms, "total": round((time.perf_counter() - self.started) * 1000, 2)}


class Retriever:
    def __init__(
        self,
        milvus: MilvusConfig,
        settings: QueryConfig,
        encoder: Encoder,
        client: CollectionReader | Connection | object | None = None,
    ) -> None:
        """`client`: a CollectionReader, a Connection or a pymilvus client to read through (the default opens the
        generation the configured name serves); `close` closes it."""
        self.milvus = milvus
        self.settings = settings
        self.encoder = encoder
        if client is None:
            client = connect(milvus)
        if not isinstance(client, CollectionReader):
            client = CollectionReader(client if isinstance(client, Connection) else Connection(client), milvus)
        self.reader = client
        # the generation the configured name serves, and the encoder its vectors came from (query/serving.py)
        self.serving = ServedCollection(self.reader, milvus, encoder, settings.serving_check_seconds)
        self.reader, self.encoder = self.serving.reader, self.serving.encoder
        self.transform = load_transform(settings.transform)
        self._cache: dict[tuple, tuple[float, RetrievalResult]] = {}

    @classmethod
    def from_config(cls, config: CairnConfig | str | Path | None = None) -> Retriever:
        if not isinstance(config, CairnConfig):
            config = load_config(config)
        try:
            encoder = query_encoder_for(config.embedding)
        except (ModuleNotFoundError, FileNotFoundError) as exc:
            raise RetrievalError(str(exc)) from None
        return cls(config.milvus, config.query, encoder)

    def retrieve(
        self,
        text: str,
        principal: Principal,
        k: int | None = None,
        doc_tag: str | None = None,
        as_of: int | None = None,
        filters: dict | None = None,
    ) -> RetrievalResult:
        """Sections for `text` that `principal` may read, packed and cited. `as_of` (epoch seconds) answers with
        what was valid then (superseded versions kept as history included); `filters` narrows by metadata
        (see query.filters.FILTER_FIELDS); `doc_tag` scopes to one document family."""
        if not isinstance(principal, Principal):
            raise TypeError("retrieve() needs a Principal(tenant, groups)")
        k = k or self.settings.k
        expr = search_expr(principal, as_of, doc_tag, filters)  # validates every argument before any work
        key = (
            principal.tenant,
            principal.groups,
            " ".join(text.lower().split()),
            k,
            doc_tag,
            as_of,
            json.dumps(filters, sort_keys=True),
            json.dumps(self.settings.steps, sort_keys=True),
        )
        if self.settings.cache_ttl_seconds > 0:
            cached = self._cache.get(key)
            if cached and cached[0] > time.monotonic():
                result = copy.deepcopy(cached[1])
                result.diagnostics["cache"] = "hit"
                return result
        try:
            self.reader, self.encoder = self.serving.current()
            result = self._retrieve(text, principal, k, expr, Access(principal, as_of), doc_tag is not None)
        except MilvusException:  # the generation read was dropped by a switch, or the engine restarted: once more
            self.reader, self.encoder = self.serving.recover()
            result = self._retrieve(text, principal, k, expr, Access(principal, as_of), doc_tag is not None)
        if self.settings.cache_ttl_seconds > 0:
            if len(self._cache) >= self.settings.cache_size:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = (time.monotonic() + self.settings.cache_ttl_seconds, copy.deepcopy(result))
        log.info(json.dumps({"event": "query", "tenant": principal.tenant, **result.diagnostics}, default=str))
        return result

    # ---- the pipeline --------------------------------------------------------------------------------
    def _retrieve(
        self, text: str, principal: Principal, k: int, expr: str, access: Access, scoped: bool = False
    ) -> RetrievalResult:
        s, on, clock = self.settings, self.settings.enabled, _Clock()
        trace: dict = {"steps_off": sorted(n for n in s.steps if not on(n))}

        # scoped to one document family (doc_tag), the caller has already named what the question is about
        verdict = gate(text, s.gate_min_terms_scoped if scoped else s.gate_min_terms)
        trace["gate"] = verdict.reason
        if on("gate") and not verdict.passed:
            clock.lap("gate")
            trace["timings_ms"] = clock.total()
            return RetrievalResult(
                text,
                [],
                status="guidance",
                message=GUIDANCE,
                confidence=conf.SPECULATIVE,
                confidence_reason="query too vague to search",
                diagnostics=trace,
            )

        texts, trace["transform"] = seeds(text, self.transform if on("transform") else None)
        vectors = [v.tolist() for v in self.encoder.encode_queries(texts)]
        clock.lap("embed")

        candidates, rankings, dense = self._search(text, vectors, expr, max(s.candidates, k * 4))
        clock.lap("search")
        keyword_on = on("keyword_leg")
        dense_on = on("dense_leg") or on("abstract_leg")
        vw, kw = leg_weights(s, scoped, dense_on, keyword_on)
        ranked = fuse(candidates, rankings, s.fusion, s.rrf_k, vw, kw)
        trace.update(
            candidates=len(ranked),
            vector_max=round(max((c.vector for c in ranked), default=0.0), 4),
            keyword_max=round(max((c.keyword for c in ranked), default=0.0), 4),
            combined_top=round(max((c.combined for c in ranked), default=0.0), 4),
        )
        clock.lap("fusion")

        trace["second_pass"] = False
        if on("second_pass") and ranked and wants_second_pass(max(c.combined for c in ranked), s.second_pass_band):
            ranked = self._second_pass(ranked, vectors[0], vw, kw, access)
            trace["second_pass"] = True
            clock.lap("second_pass")

        kept = ranked
        if on("floors"):
            outcome = apply_floors(text, ranked, Floors.of(s, scoped))
            kept = outcome.kept
            trace["floors"] = {"dropped": outcome.dropped, "rescued": outcome.rescued, "notes": outcome.notes}
            clock.lap("floors")
        if not kept:
            trace["timings_ms"] = clock.total()
            return RetrievalResult(
                text,
                [],
                status="no_results",
                message=NO_RESULTS,
                confidence=conf.SPECULATIVE,
                confidence_reason="no section passed the relevance floors",
                diagnostics=trace,
            )

        sections = promote(kept)
        trace["injections"] = 0
        if on("sparse_doc_recall"):
            dense_by_distance = sorted(dense, key=lambda c: -c.vector)[: s.sparse_doc_top]
            docs = {c.document_id for c in dense_by_distance if 1.0 - c.vector <= s.sparse_doc_max_distance}
            counts = self._children_per_document(
                docs - {x.document_id for x in sections[:k]}, dense_by_distance, access
            )
            limits = SparseDocLimits(s.sparse_doc_max_chunks, s.sparse_doc_max_distance, s.sparse_doc_max_injections)
            sections, injected = sparse_doc_recall(sections, dense_by_distance, counts, k, limits)
            trace["injections"] = len(injected)
            clock.lap("sparse_doc_recall")
        primary = dominant_document(sections, k, s.dominance_share) if on("dominance") else None
        if primary:
            sections = by_continuity(sections, primary)
        trace["primary_document"] = primary
        chosen = diversify(sections, k, s.per_document, s.diversity_drop) if on("diversity") else sections[:k]
        clock.lap("selection")

        parents = self._fetch_parents([x.parent_chunk_id for x in chosen], access)
        clock.lap("fetch")
        hits = []
        for seed in chosen:
            row = parents.get(seed.parent_chunk_id)
            if row is None:
                continue
            updated = from_epoch(row["updated_at"])
            hits.append(
                Hit(
                    chunk_id=row["chunk_id"],
                    document_id=row["document_id"],
                    section_id=row["section_id"],
                    breadcrumbs=list(row["breadcrumbs"]),
                    title=row["title"],
                    source_uri=row["source_uri"],
                    score=round(seed.combined, 6),
                    text=row["text"],
                    citation=citation(row),
                    version_hash=row["version_hash"],
                    updated_at=updated.isoformat() if updated else None,
                    doc_tag=row["doc_tag"],
                    deep_link=deep_link(row),
                    locator=row["locator"],
                    fused=round(seed.fused, 6),
                    vector_score=round(seed.vector, 6),
                    keyword_score=round(seed.keyword_norm, 6),
                    low_relevance=seed.combined < s.low_relevance,
                    recall_injected=seed.recall_injected,
                    reason=seed.reason,
                    flags=list(dict.fromkeys(seed.flags)),
                    matched_chunk_ids=seed.children,
                )
            )
        trace["primary_doc_fraction"] = (
            round(sum(h.document_id == primary for h in hits) / len(hits), 4) if primary and hits else None
        )

        blocks = []
        if on("packing"):
            neighbours = (
                self._neighbours(
                    [parents[x.parent_chunk_id] for x in chosen if x.parent_chunk_id in parents], primary, access
                )
                if on("expansion")
                else {}
            )
            child_rows = {c.chunk_id: c for c in candidates}
            items = [
                PackItem(
                    rank,
                    parents[h.chunk_id],
                    neighbours.get(h.chunk_id, []),
                    [
                        {"text": child_rows[c].text, "token_count": child_rows[c].token_count}
                        for c in h.matched_chunk_ids
                        if c in child_rows
                    ],
                )
                for rank, h in enumerate(hits, 1)
            ]
            blocks = pack(items, s.token_budget)
            trace["expanded_sections"] = sum(len(v) for v in neighbours.values())
            clock.lap("packing")

        tier, reason = conf.tier(hits, s.low_relevance)
        found_gaps = conf.gaps(text, [" ".join([h.title, *h.breadcrumbs, h.text]) for h in hits]) if on("gaps") else []
        trace["timings_ms"] = clock.total()
        return RetrievalResult(
            text,
            hits,
            blocks,
            "ok" if hits else "no_results",
            "" if hits else NO_RESULTS,
            tier,
            reason,
            found_gaps,
            trace,
        )

    # ---- reads, each one call through the access layer (index/milvus.py) ------------------------------------
    def _search(self, text: str, vectors: list[list[float]], expr: str, limit: int):
        """Run the enabled legs; return candidates, the ranked id lists for fusion, and the full-text leg's
        candidates (what the sparse-document guarantee inspects)."""
        on = self.settings.enabled
        found: dict[str, Candidate] = {}
        rankings: list[list[str]] = []
        dense: dict[str, Candidate] = {}  # insertion-ordered; keyed by id (a dataclass compares field by field)

        def candidate(hit: dict) -> Candidate:
            e = hit["entity"]
            cid = hit.get("chunk_id") or hit.get("id")
            if cid not in found:
                found[cid] = Candidate(
                    cid,
                    e["parent_chunk_id"],
                    e["document_id"],
                    e["section_id"],
                    e["section_order"],
                    e["title"],
                    list(e["breadcrumbs"]),
                    e["text"],
                    e["token_count"],
                )
            return found[cid]

        legs = [f for f, n in (("full_text_embedding", "dense_leg"), ("abstract_embedding", "abstract_leg")) if on(n)]
        for field in legs:
            for per_seed in self.reader.search_dense(field, vectors, expr, limit, CHILD_FIELDS):
                ranking = []
                for hit in per_seed:
                    c = candidate(hit)
                    c.vector = max(c.vector, self._relevance(float(hit["distance"])))
                    ranking.append(c.chunk_id)
                    if field == "full_text_embedding":
                        dense.setdefault(c.chunk_id, c)
                rankings.append(ranking)
        if on("keyword_leg"):
            ranking = []
            for rank, hit in enumerate(self.reader.search_bm25(text, expr, limit, CHILD_FIELDS), 1):
                c = candidate(hit)
                c.keyword = abs(float(hit["distance"]))  # Milvus Lite reports BM25 negated
                c.keyword_rank = rank
                ranking.append(c.chunk_id)
            rankings.append(ranking)
            self._fill_vectors([c for c in found.values() if c.vector == 0.0], vectors[0])
        return list(found.values()), rankings, list(dense.values())

    def _relevance(self, cosine: float) -> float:
        """A cosine of the serving encoder on the scale the settings are in (embedding/model.py cosine_scale)."""
        a, b = cosine_scale(self.encoder.identity)
        return a * cosine + b

    def _fill_vectors(self, candidates: list[Candidate], query_vector: list[float]) -> None:
        """Keyword-only candidates get their true cosine, so the floors judge them like the others."""
        if not candidates or not self.settings.enabled("dense_leg"):
            return
        by_id = {c.chunk_id: c for c in candidates}
        for row in self.reader.rows(list(by_id), ["full_text_embedding"]):
            by_id[row["chunk_id"]].vector = self._relevance(_cosine(row["full_text_embedding"], query_vector))

    def _second_pass(
        self, ranked: list[Candidate], query_vector: list[float], vw: float, kw: float, access: Access
    ) -> list[Candidate]:
        """Borderline top score: rescore the top N with the whole section's (pooled) vector beside the chunk's."""
        top, rest = ranked[: self.settings.second_pass_top], ranked[self.settings.second_pass_top :]
        rows = self.reader.rows([c.parent_chunk_id for c in top], ["full_text_embedding", *ACCESS_FIELDS])
        section_cos = {
            row["chunk_id"]: self._relevance(_cosine(row["full_text_embedding"], query_vector))
            for row in rows
            if access.admits(row)
        }
        for c in top:
            if c.parent_chunk_id in section_cos:
                c.vector = (c.vector + section_cos[c.parent_chunk_id]) / 2
                c.combined = combined(c, vw, kw)
                if self.settings.fusion == "weighted":  # the list stays in the order of the score it shows
                    c.fused = c.combined
                c.flags.append("second_pass")
        top.sort(key=lambda c: (-c.combined, c.chunk_id))
        return top + rest

    def _children_per_document(self, documents: set[str], dense: list[Candidate], access: Access) -> dict[str, int]:
        """How many child rows each document has that the caller may read: recorded on the parent rows of the
        document's version (schemas/row_links.py ParentLinks), one point read; scanned for rows written before."""
        parent_of = {c.document_id: c.parent_chunk_id for c in reversed(dense) if c.document_id in documents}
        counts: dict[str, int] = {}
        for row in self.reader.rows(list(parent_of.values()), ["document_id", "extra", *ACCESS_FIELDS]):
            recorded = ParentLinks.from_row(row).document_child_count
            if recorded is not None:
                counts[row["document_id"]] = recorded if access.admits(row) else 0
        unrecorded = documents - set(counts)
        return {**counts, **self.reader.children_per_document(unrecorded, access.expr)} if unrecorded else counts

    def _fetch_parents(self, chunk_ids: list[str], access: Access) -> dict[str, dict]:
        # The ACL is checked again on the parents themselves: nothing leaves unchecked.
        rows = [r for r in self.reader.rows(chunk_ids, list(OUTPUT_FIELDS)) if access.admits(r)]
        keep = one_version_per_document(rows)
        return {r["chunk_id"]: r for r in rows if r["chunk_id"] in keep}

    def _neighbours(self, seeds: list[dict], primary: str | None, access: Access) -> dict[str, list[dict]]:
        """1-hop adjacency: the previous and next section of each hit (only the primary document's when one
        dominates), same version, ACL-checked. Keyed by the seed's parent chunk id. Each parent row names its
        neighbours (schemas/row_links.py ParentLinks): one point read; a scan for rows written before that."""
        seeds = [r for r in seeds if primary is None or r["document_id"] == primary]
        recorded = [ParentLinks.from_row(r).neighbours for r in seeds]
        ids = [chunk_id for neighbours in recorded if neighbours is not None for chunk_id in neighbours]
        found = self.reader.rows(ids, list(OUTPUT_FIELDS))
        unlinked = [r for r, neighbours in zip(seeds, recorded) if neighbours is None]
        if unlinked:
            found += self.reader.neighbours(unlinked, access.expr, list(OUTPUT_FIELDS))
        rows = newest_per_section([r for r in found if access.admits(r)])
        return {
            seed["chunk_id"]: [
                r
                for r in rows
                if r["document_id"] == seed["document_id"] and abs(r["section_order"] - seed["section_order"]) == 1
            ]
            for seed in seeds
        }

    def close(self) -> None:
        self.reader.close()


def _cosine(vector, query_vector) -> float:
    v, q = np.asarray(vector, dtype=np.float32), np.asarray(query_vector, dtype=np.float32)
    return float(v @ q / ((np.linalg.norm(v) * np.linalg.norm(q)) or 1.0))
