"""Cairn's retrieval as a LlamaIndex retriever (the `llamaindex` extra: `pip install "cairn[llamaindex]"`).

    from cairn.integrations.llamaindex import CairnRetriever
    with CairnRetriever.from_config("data/cairn.toml", tenant="acme", groups=["sre"], k=5) as retriever:
        for found in retriever.retrieve("how do I fail over ledger-db"):
            print(found.score, found.node.metadata["citation"])

One NodeWithScore per hit of `Retriever.retrieve`, best first: a TextNode of the section's text (id: its chunk_id)
with the metadata the LangChain adapter gives, and the hit's calibrated score. The Principal is fixed when the
retriever is made.

Network: importing llama_index.core and retrieving reach nothing. NLTK data (stopwords, punkt) and tiktoken's
encoding are fetched lazily by LlamaIndex's text splitters and token counters, which this path never calls, so
nothing is set here to prevent it (tests/integration/test_adapters.py watches for connections).
"""

from __future__ import annotations

import asyncio
from typing import Any

from cairn.integrations.common import OwnsRetriever, Scope, Source, adapter_over, ask, empty_metadata, hit_metadata
from cairn.integrations.common import needs_extra as _needs_extra

try:
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ModuleNotFoundError as exc:
    _needs_extra(exc, "llama_index", "llama-index-core", "llamaindex")
    raise  # llama-index-core is there but something it needs is not: its own error says what
from cairn.query import Principal, Retriever
from cairn.query.filters import AsOf, Filters

# What an LLM reads of a node besides its text (LlamaIndex prepends metadata to it): the citation, which names the
# title, version and link; scores, flags and ids would be noise in a prompt. No metadata is embedded.
PROMPT_METADATA = {"citation"}


class CairnRetriever(OwnsRetriever, BaseRetriever):
    """A LlamaIndex retriever over a Cairn Retriever, asking on behalf of one Principal.

    `CairnRetriever(retriever, Principal(...), k=...)` over a Retriever you own (and close), or
    `CairnRetriever.from_config(path, tenant=..., groups=[...])`, which opens one that `close()` closes.
    `aretrieve` runs the search in a thread (LlamaIndex's default would run it on the event loop)."""

    # a result without hits is one node holding why (score 0, metadata["status"] not "ok", no citation); set it
    # False on a retriever for an empty list, as before #53
    explain_empty: bool = True

    def __init__(
        self,
        retriever: Retriever,
        principal: Principal,
        *,
        k: int | None = None,
        doc_tag: str | None = None,
        as_of: AsOf = None,
        filters: Filters | None = None,
    ) -> None:
        self.scope = Scope(principal, k, doc_tag, as_of, filters)
        self.retriever = retriever
        self._owned = False
        super().__init__(callback_manager=CallbackManager())

    @property
    def principal(self) -> Principal:
        return self.scope.principal

    @classmethod
    def from_config(
        cls, config: Source, tenant: str, groups: list[str], k: int | None = None, **scope: Any
    ) -> CairnRetriever:
        """A retriever over `Retriever.from_config(config)` (or over `config` itself, a Retriever, left open by
        close()); `scope`: doc_tag, as_of, filters."""
        return adapter_over(config, lambda retriever: cls(retriever, Principal(tenant, groups), k=k, **scope))

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        result = ask(self.retriever, query_bundle.query_str, self.scope)
        empty = empty_metadata(result) if self.explain_empty else None
        if empty is not None:
            keys = sorted(empty)
            why = TextNode(
                text=result.message, metadata=empty, excluded_llm_metadata_keys=keys, excluded_embed_metadata_keys=keys
            )
            return [NodeWithScore(node=why, score=0.0)]
        nodes = []
        for rank, hit in enumerate(result.hits, 1):
            metadata = hit_metadata(hit, rank, result)
            node = TextNode(
                id_=hit.chunk_id,
                text=hit.text,
                metadata=metadata,
                excluded_llm_metadata_keys=sorted(set(metadata) - PROMPT_METADATA),
                excluded_embed_metadata_keys=sorted(metadata),
            )
            nodes.append(NodeWithScore(node=node, score=hit.score))
        return nodes

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._retrieve, query_bundle)
