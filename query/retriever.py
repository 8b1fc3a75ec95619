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
fusion -> rerank (a borderline top only) -> floors (+ exact-term rescue) -> promotion to sections (one version
per document) -> dominance gate -> expansion -> diversity -> sparse-document recall -> the cut to k -> parents
fetched (ACL re-checked) -> citations -> packing -> confidence + gaps -> one telemetry record (query/pipeline.py
has the steps after the floors). An empty result says why (query/empty.py).
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
from cairn.query.empty import BELOW_FLOORS, TOO_VAGUE, Scope, message, why_nothing_found
from cairn.query.filters import Access, AsOf, Filters, as_epoch, search_expr
from cairn.query.floors import Floors, apply_floors
from cairn.query.fusion import fuse, leg_weights
from cairn.query.gate import judge
from cairn.query.hits import weak_hits
from cairn.query.pipeline import Ask, Steps
from cairn.query.rerank import in_band, rerank
from cairn.query.search import Search
from cairn.query.serving import ServedCollection
from cairn.query.specific import IndexTerms
from cairn.query.transform import load_transform, seeds
from cairn.query.types import Block, Diagnostics, RetrievalResult
from cairn.schemas import Principal
from cairn.schemas.config import QUERY_STEPS, CairnConfig, MilvusConfig, QueryConfig, load_config

log = logging.getLogger("cairn.query")


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
        (see query.filters.FILTER_FIELDS); `doc_tag` scopes to one document family. An empty result says why
        (`empty_reason`, query/empty.py)."""
        if not isinstance(principal, Principal):
            raise TypeError("retrieve() needs a Principal(tenant, groups)")
        k = k or self.settings.k
        as_of = as_epoch(as_of)
        expr = search_expr(principal, as_of, doc_tag, filters)  # validates every argument before any work
        ask = Ask(text, principal, k, expr, Access(principal, as_of), Scope(doc_tag, filters, as_of))
        cached = self.settings.cache_ttl_seconds > 0
        if cached:
            self.reader, self.encoder = self.serving.current()  # a switched generation is another cache key
            key = self._cache_key(ask)
            hit = self._cache.get(key)
            if hit and hit[0] > time.monotonic():
                result = copy.deepcopy(hit[1])
                result.diagnostics["cache"] = "hit"
                return result
        try:
            self.reader, self.encoder = self.serving.current()
            result = self._retrieve(ask)
        except MilvusException:  # the generation read was dropped by a switch, or the engine restarted: once more
            self.reader, self.encoder = self.serving.recover()
            result = self._retrieve(ask)
        if cached:
            if len(self._cache) >= self.settings.cache_size:
                self._cache.pop(next(iter(self._cache)))
            self._cache[self._cache_key(ask)] = (
                time.monotonic() + self.settings.cache_ttl_seconds,
                copy.deepcopy(result),
            )
        log.info(json.dumps({"event": "query", "tenant": principal.tenant, **result.diagnostics}, default=str))
        return result

    def _cache_key(self, ask: Ask) -> tuple[Hashable, ...]:
        """Rule 8's key (tenant, normalised question, k, rerank flag: every step switch) with what else changes
        an answer: the groups, the scope, and the generation read (a reindex switch must not serve old rows)."""
        scope = ask.scope
        return (
            ask.principal.tenant,
            ask.principal.groups,
            " ".join(ask.text.lower().split()),
            ask.k,
            scope.doc_tag,
            scope.as_of,
            json.dumps(scope.filters, sort_keys=True),
            json.dumps({step: self.settings.enabled(step) for step in QUERY_STEPS}, sort_keys=True),
            self.serving.collection,
        )

    # ---- the pipeline --------------------------------------------------------------------------------
    def _retrieve(self, ask: Ask) -> RetrievalResult:
        text, k, scoped = ask.text, ask.k, ask.scoped
        s, on, clock = self.settings, self.settings.enabled, _Clock()
        trace: Diagnostics = {"steps_off": sorted(n for n in s.steps if not on(n))}

        # scoped to one document family (doc_tag), the caller has already named what the question is about
        index = IndexTerms(self.reader, ask.expr) if on("gate") else None  # a few words: are they specific here?
        verdict = judge(
            text, s.gate_min_terms_scoped if scoped else s.gate_min_terms, s.gate_symptoms, index, s.gate_specific_share
        )
        trace["gate"] = verdict.reason
        if on("gate") and not verdict.passed:
            clock.lap("gate")
            return self._empty(ask, trace, clock, TOO_VAGUE, "query too vague to search", verdict.example)

        texts, trace["transform"] = seeds(text, self.transform if on("transform") else None, s.transform_replaces_query)
        vectors = [v.tolist() for v in self.encoder.encode_queries(texts)]
        clock.lap("embed")

        search = Search(self.reader, s, self.encoder.identity)
        found = search.legs(text, vectors, ask.expr, max(s.candidates, k * 4))
        clock.lap("search")
        keyword_on = on("keyword_leg")
        dense_on = on("dense_leg") or on("abstract_leg")
        vw, kw = leg_weights(s, scoped, dense_on, keyword_on)
        ranked = fuse(found.candidates, found.rankings, s.fusion, s.rrf_k, vw, kw)
        trace["candidates"] = len(ranked)
        trace["vector_max"] = round(max((c.vector for c in ranked), default=0.0), 4)
        trace["keyword_max"] = round(max((c.keyword for c in ranked), default=0.0), 4)
        trace["combined_top"] = round(max((c.combined for c in ranked), default=0.0), 4)
        trace["chunks"] = {"searched": len(ranked)}
        clock.lap("fusion")

        trace["rerank_used"], trace["rerank_ms"] = False, 0.0
        if on("rerank") and ranked and in_band(max(c.combined for c in ranked), s.rerank_band):
            reranked = rerank(text, ranked, self.reranker(), s.rerank_top, s.rerank_weight)
            ranked, trace["rerank_used"], trace["rerank_ms"] = reranked.ranked, reranked.used, reranked.ms
            clock.lap("rerank")

        kept = ranked
        floors = Floors.of(s, scoped)
        if on("floors"):
            outcome = apply_floors(text, ranked, floors)
            kept = outcome.kept
            trace["floors"] = {"dropped": outcome.dropped, "rescued": outcome.rescued, "notes": outcome.notes}
            trace["weak_hits"] = weak_hits(outcome.weak, kept, k)
            clock.lap("floors")
        trace["chunks"]["passed_floors"] = len(kept)
        if not kept:
            if found.candidates:
                return self._empty(ask, trace, clock, BELOW_FLOORS, "no section passed the relevance floors")
            reason = why_nothing_found(self.reader, ask.principal, ask.scope, on("dense_leg"))
            return self._empty(ask, trace, clock, reason, "nothing found to search")

        steps = Steps(self.reader, s, ask, floors, trace)
        chosen, rows, primary = steps.select(kept, found)
        clock.lap("selection")
        pairs = steps.hits(chosen, rows, primary, found)
        hits = [hit for _, hit in pairs]
        clock.lap("fetch")
        blocks: list[Block] = []
        if on("packing") and hits:
            blocks = steps.pack(pairs, rows, found)
            clock.lap("packing")
        tier, reason = steps.account(pairs, primary)
        found_gaps = conf.gaps(text, [" ".join([h.title, *h.breadcrumbs, h.text]) for h in hits]) if on("gaps") else []
        trace["timings_ms"] = clock.total()
        if not hits:  # every chosen section was refused by the ACL re-check or replaced meanwhile: rare
            return self._empty(ask, trace, clock, BELOW_FLOORS, "no section could be read")
        return RetrievalResult(text, hits, blocks, "ok", "", tier, reason, found_gaps, trace)

    def _empty(
        self, ask: Ask, trace: Diagnostics, clock: _Clock, why: str, said: str, example: str = ""
    ) -> RetrievalResult:
        """An empty result that says why (query/empty.py): guidance for a vague question, else no_results."""
        trace["timings_ms"] = clock.total()
        weak = trace.get("weak_hits") or []
        best = max((w["score"] for w in weak), default=None) if why == BELOW_FLOORS else None
        return RetrievalResult(
            ask.text,
            [],
            status="guidance" if why == TOO_VAGUE else "no_results",
            message=message(why, ask.principal, ask.scope, best, example),
            confidence=conf.SPECULATIVE,
            confidence_reason=said,
            diagnostics=trace,
            empty_reason=why,
        )

    def close(self) -> None:
        self.reader.close()
