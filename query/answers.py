"""The JSON a caller gets for one question: `cairn query --json`, `POST /v1/retrieve` and the MCP search tool all
hand out this shape. It is a contract (scripts and services rely on its keys): fields are only ever added."""

from __future__ import annotations

from typing import Any

from cairn.query.types import RetrievalResult

# What the list's order is, and what each score of a result is (the human listing prints the same).
ORDER = (
    'rank: by `fused` (by default, fusion = "weighted", it is `score` itself, so the list is in the order of the '
    'relevance it shows; with fusion = "rrf", the reciprocal-rank fusion of the legs), the main document\'s '
    "sections first; `score` is "
    "the calibrated relevance in [0, 1] that the floors and the confidence read, `vector_score` the cosine, "
    "`keyword_score` the BM25 score over the query's best"
)
HIT_FIELDS = (
    "chunk_id",
    "document_id",
    "section_id",
    "breadcrumbs",
    "title",
    "source_uri",
    "score",
    "text",
    "citation",
)


def result_json(result: RetrievalResult) -> dict[str, Any]:
    """The `query --json` contract (scripts rely on these keys; fields are only ever added)."""
    data = result.to_dict()
    data["results"] = [
        {"rank": rank, **{f: getattr(h, f) for f in HIT_FIELDS}, **h.to_dict()} for rank, h in enumerate(result.hits, 1)
    ]
    data["ordered_by"] = ORDER
    return data
