"""retrieve(): the query pipeline, one small switchable step at a time; its reads are query/search.py's (the
search legs) and query/parents.py's (parent rows), through the generation query/serving.py follows.

    from cairn.query import Retriever, Principal
    retriever = Retriever.from_config("data/cairn.toml")
    result = retriever.retrieve("how do I fail over ledger-db", Principal("acme", ["sre"]), k=5)
    for hit in result.hits:
        print(hit.score, hit.citation)
    context = "\\n\\n".join(block.text for block in result.blocks)

Steps (each off with `[query] steps = { name = false }`, see schemas.config.QUERY_STEPS): gate -> transform ->
hybrid search (dense full text, dense abstract, BM25; tenant + ACL + time pre-filter inside Milvus) ->
fusion -> rerank (a borderline top only) -> floors (+ exact-term rescue) -> promotion to sections ->
sparse-document recall -> dominance -> diversity -> parents fetched (ACL re-checked) -> expansion -> packing ->
citations -> confidence + gaps -> one telemetry record.
"""

from __future__ import annotations

import copy
import json
import logging
import time
from collections.abc import Hashable
from pathlib import Path

from pymilvus.exceptions import MilvusException

from cairn.embedding import Encoder, query_encoder_for
from cairn.embedding.reranker import Reranker, load_reranker
from cairn.errors import NoCollection, RetrievalError, StoreError
from cairn.index.generations import open_serving
from cairn.index.milvus import CollectionReader, Connection
from cairn.query import confidence as conf
from cairn.query.citations import citation, deep_link
from cairn.query.filters import Access, AsOf, Filters, as_epoch, search_expr
from cairn.query.floors import Floors, apply_floors
from cairn.query.fusion import fuse, leg_weights
from cairn.query.gate import GUIDANCE, gate
from cairn.query.packing import ChildText, PackItem, pack
from cairn.query.parents import children_per_document, fetch_parents, neighbours
from cairn.query.rerank import in_band, rerank
from cairn.query.search import Search
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
from cairn.query.types import Block, Diagnostics, Hit, RetrievalResult
from cairn.schemas import Principal, from_epoch
from cairn.schemas.config import CairnConfig, MilvusConfig, QueryConfig, load_config

log = logging.getLogger("cairn.query")
NO_RESULTS = "No relevant documents were found for this question in what you can access."


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
        reranker: Reranker | None = None,
    ) -> None:
        """`client`: a CollectionReader, a Connection or a pymilvus client to read through (the default opens the
        generation the configured name serves); `close` closes it. `reranker`: the rerank step's model (the
        default loads [query] rerank_model when a question first needs it)."""
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
        self._reranker = reranker
        self._cache: dict[tuple[Hashable, ...], tuple[float, RetrievalResult]] = {}  # key -> (expiry, result)

    @classmethod
    def from_config(cls, config: CairnConfig | str | Path | None = None) -> Retriever:
        if not isinstance(config, CairnConfig):
            config = load_config(config)
        try:
            encoder = query_encoder_for(config.embedding)
        except (ModuleNotFoundError, FileNotFoundError) as exc:
            raise RetrievalError(str(exc)) from None
        retriever = cls(config.milvus, config.query, encoder)
        if config.query.enabled("rerank"):  # its model loads now: a missing file is said before any question
            try:
                retriever.reranker()
            except RetrievalError:
                retriever.close()
                raise
        return retriever

    def reranker(self) -> Reranker:
        """The [query] rerank_model, loaded on first use: from the exported query-model folder the encoder
        came from when it holds a copy, else from the package that ships it (RetrievalError if neither)."""
        if self._reranker is None:
            folder = getattr(self.encoder, "folder", None)
            try:
                self._reranker = load_reranker(self.settings.rerank_model, str(folder) if folder else None)
            except FileNotFoundError as exc:
                raise RetrievalError(str(exc)) from None
        return self._reranker

    def retrieve(
        self,
        text: str,
        principal: Principal,
        k: int | None = None,
        doc_tag: str | None = None,
        as_of: AsOf = None,
        filters: Filters | None = None,
    ) -> RetrievalResult:
        """Sections for `text` that `principal` may read, packed and cited. `as_of` (epoch seconds, an ISO date or
        date-time as `cairn query --as-of` takes, a date or a datetime; UTC unless it says otherwise) answers with
        what was valid then (superseded versions kept as history included); `filters` narrows by metadata
        (see query.filters.FILTER_FIELDS); `doc_tag` scopes to one document family."""
        if not isinstance(principal, Principal):
            raise TypeError("retrieve() needs a Principal(tenant, groups)")
        k = k or self.settings.k
        as_of = as_epoch(as_of)
        expr = search_expr(principal, as_of, doc_tag, filters)  # validates every argument before any work
        key: tuple[Hashable, ...] = (
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
        trace: Diagnostics = {"steps_off": sorted(n for n in s.steps if not on(n))}

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

        search = Search(self.reader, s, self.encoder.identity)
        found = search.legs(text, vectors, expr, max(s.candidates, k * 4))
        clock.lap("search")
        keyword_on = on("keyword_leg")
        dense_on = on("dense_leg") or on("abstract_leg")
        vw, kw = leg_weights(s, scoped, dense_on, keyword_on)
        ranked = fuse(found.candidates, found.rankings, s.fusion, s.rrf_k, vw, kw)
        trace["candidates"] = len(ranked)
        trace["vector_max"] = round(max((c.vector for c in ranked), default=0.0), 4)
        trace["keyword_max"] = round(max((c.keyword for c in ranked), default=0.0), 4)
        trace["combined_top"] = round(max((c.combined for c in ranked), default=0.0), 4)
        clock.lap("fusion")

        trace["rerank_used"], trace["rerank_ms"] = False, 0.0
        if on("rerank") and ranked and in_band(max(c.combined for c in ranked), s.rerank_band):
            sections = None
            if s.rerank_text == "section":
                parents = list(dict.fromkeys(c.parent_chunk_id for c in ranked))[: s.rerank_top]
                sections = {key: row["text"] for key, row in fetch_parents(self.reader, parents, access).items()}
            reranked = rerank(text, ranked, self.reranker(), s.rerank_top, s.rerank_weight, sections)
            ranked, trace["rerank_used"], trace["rerank_ms"] = reranked.ranked, reranked.used, reranked.ms
            clock.lap("rerank")

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
            dense_by_distance = sorted(found.dense, key=lambda c: -c.vector)[: s.sparse_doc_top]
            docs = {c.document_id for c in dense_by_distance if 1.0 - c.vector <= s.sparse_doc_max_distance}
            counts = children_per_document(
                self.reader, docs - {x.document_id for x in sections[:k]}, dense_by_distance, access
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

        parents = fetch_parents(self.reader, [x.parent_chunk_id for x in chosen], access)
        clock.lap("fetch")
        hits: list[Hit] = []
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

        blocks: list[Block] = []
        if on("packing"):
            adjacent = (
                neighbours(
                    self.reader,
                    [parents[x.parent_chunk_id] for x in chosen if x.parent_chunk_id in parents],
                    primary,
                    access,
                )
                if on("expansion")
                else {}
            )
            child_rows = {c.chunk_id: c for c in found.candidates}
            items = [
                PackItem(
                    rank,
                    parents[h.chunk_id],
                    adjacent.get(h.chunk_id, []),
                    [
                        ChildText(text=child_rows[c].text, token_count=child_rows[c].token_count)
                        for c in h.matched_chunk_ids
                        if c in child_rows
                    ],
                )
                for rank, h in enumerate(hits, 1)
            ]
            blocks = pack(items, s.token_budget)
            trace["expanded_sections"] = sum(len(v) for v in adjacent.values())
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

    def close(self) -> None:
        self.reader.close()
