"""Cairn's retrieval as a LangChain retriever (the `langchain` extra: `pip install "cairn[langchain]"`).

    from cairn.integrations.langchain import CairnRetriever
    with CairnRetriever.from_config("data/cairn.toml", tenant="acme", groups=["sre"], k=5) as retriever:
        for doc in retriever.invoke("how do I fail over ledger-db"):
            print(doc.metadata["citation"])

One Document per hit of `Retriever.retrieve`, best first: the section's text, and as metadata what `cairn query
--json` gives a result (citation, scores, flags, ids, links), its rank and the answer's confidence and status.
The Principal is fixed when the retriever is made; nothing passed with a question changes who asks.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, InstanceOf, PrivateAttr

from cairn.integrations.common import OwnsRetriever, Scope, Source, adapter_over, ask, empty_metadata, hit_metadata
from cairn.integrations.common import needs_extra as _needs_extra

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
except ModuleNotFoundError as exc:
    _needs_extra(exc, "langchain_core", "langchain-core", "langchain")
    raise  # langchain-core is there but something it needs is not: its own error says what
from cairn.query import Principal, Retriever
from cairn.query.filters import AsOf, Filters


class CairnRetriever(OwnsRetriever, BaseRetriever):
    """A LangChain retriever over a Cairn Retriever, asking on behalf of one Principal.

    `CairnRetriever(retriever=..., principal=Principal(...), k=...)` over a Retriever you own (and close), or
    `CairnRetriever.from_config(path, tenant=..., groups=[...])`, which opens one that `close()` closes.
    Async calls (`ainvoke`, `abatch`) run the search in LangChain's thread pool."""

    # frozen: the principal and scope cannot be reassigned on a retriever already handed to a chain
    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    retriever: Retriever
    principal: InstanceOf[Principal]  # as made by Principal(), which normalises; never built from a dict
    k: int | None = None
    doc_tag: str | None = None
    as_of: AsOf = None
    filters: Filters | None = None
    # a result without hits is one Document holding why (too vague, with an example; nothing relevant...), its
    # metadata["status"] not "ok" and no citation; False: an empty list, as before #53
    explain_empty: bool = True
    _owned: bool = PrivateAttr(default=False)

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        Scope(self.principal, self.k, self.doc_tag, self.as_of, self.filters)  # refused now, not at the first question

    @classmethod
    def from_config(
        cls, config: Source, tenant: str, groups: list[str], k: int | None = None, **fields: Any
    ) -> CairnRetriever:
        """A retriever over `Retriever.from_config(config)` (or over `config` itself, a Retriever, left open by
        close()); `fields`: doc_tag, as_of, filters, and BaseRetriever's own (tags, metadata)."""
        return adapter_over(
            config, lambda retriever: cls(retriever=retriever, principal=Principal(tenant, groups), k=k, **fields)
        )

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        # the scope from the fields as they are now: a model_copy(update=...) asks as what it says, never as the
        # original (pydantic copies private attributes as they were)
        result = ask(self.retriever, query, Scope(self.principal, self.k, self.doc_tag, self.as_of, self.filters))
        empty = empty_metadata(result) if self.explain_empty else None
        if empty is not None:
            return [Document(page_content=result.message, metadata=empty)]
        return [
            Document(page_content=hit.text, metadata=hit_metadata(hit, rank, result), id=hit.chunk_id)
            for rank, hit in enumerate(result.hits, 1)
        ]
