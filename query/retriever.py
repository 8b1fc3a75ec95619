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
from typing import cast

from cairn.embedding import Encoder, query_encoder_for
from cairn.embedding.reranker import Reranker, load_reranker
from cairn.errors import Fault, NoCollection, RetrievalError, StoreError, fault_of
from cairn.index.generations import open_serving
from cairn.index.milvus import Connection
from cairn.index.protocol import IndexReader
from cairn.index.reader import CollectionReader
from cairn.query import pipeline
from cairn.query.empty import QuestionScope
from cairn.query.filters import AsOf, Filters, access_of, as_epoch, check_question, search_filter
from cairn.query.serving import FixedCollection, Served, ServedCollection
from cairn.query.telemetry import log_query
from cairn.query.transform import load_transform
from cairn.query.types import Ask, RetrievalResult
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


class Retriever:
    def __init__(
        self,
        milvus: MilvusConfig,
        settings: QueryConfig,
        encoder: Encoder,
        client: IndexReader | Connection | object | None = None,
        reranker: Reranker | None = None,
    ) -> None:
        """`client`: a CollectionReader, a Connection or a pymilvus client to read through (the default opens the
        generation the configured name serves), or any other IndexReader (index/memory.py InMemoryStore: read as
        it is, no generations); `close` closes it. `reranker`: the rerank step's model (the default loads [query]
        rerank_model when a question first needs it)."""
        self.milvus = milvus
        self.settings = settings
        self.serving: Served
        if client is None:
            client = connect(milvus)
        if isinstance(client, CollectionReader | Connection) or not hasattr(client, "search_dense"):
            if not isinstance(client, CollectionReader):
                client = CollectionReader(client if isinstance(client, Connection) else Connection(client), milvus)
            # the generation the configured name serves, and the encoder its vectors came from (query/serving.py)
            self.serving = ServedCollection(client, milvus, encoder, settings.serving_check_seconds)
        else:
            self.serving = FixedCollection(cast(IndexReader, client), encoder)
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

    @property
    def reader(self) -> IndexReader:
        """The reader of the generation the last question read (the served collection's: never a copy)."""
        return self.serving.reader

    @property
    def encoder(self) -> Encoder:
        """The encoder of that generation's vectors."""
        return self.serving.encoder

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
        check_question(text)  # a caller's bad text is its error (FilterError), never the index's
        as_of = as_epoch(as_of)
        where = search_filter(principal, as_of, doc_tag, filters)  # validates every argument before any work
        ask = Ask(text, principal, k, where, access_of(principal, as_of), QuestionScope(doc_tag, filters, as_of))
        cached = self.settings.cache_ttl_seconds > 0
        if cached:
            self.serving.current()  # a switched generation is another cache key
            key = self._cache_key(ask)
            hit = self._cache.get(key)
            if hit and hit[0] > time.monotonic():
                result = copy.deepcopy(hit[1])
                result.diagnostics["cache"] = "hit"
                log_query(principal.tenant, result.diagnostics)  # a cached answer is logged like any other
                return result
        try:
            result = pipeline.run(self._context(ask, *self.serving.current()))
        except Exception as exc:  # the generation read was dropped by a switch, or the engine restarted: once more
            if fault_of(exc) is not Fault.TRANSIENT:
                raise
            result = pipeline.run(self._context(ask, *self.serving.recover()))
        if cached:
            if len(self._cache) >= self.settings.cache_size:
                self._cache.pop(next(iter(self._cache)))
            self._cache[self._cache_key(ask)] = (
                time.monotonic() + self.settings.cache_ttl_seconds,
                copy.deepcopy(result),
            )
        log_query(principal.tenant, result.diagnostics)
        return result

    def _context(self, ask: Ask, reader: IndexReader, encoder: Encoder) -> pipeline.Context:
        """One question's context: the serving generation's reader and encoder as of now."""
        return pipeline.Context(reader, encoder, self.settings, ask, self.transform, self.reranker)

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

    def close(self) -> None:
        self.serving.reader.close()
