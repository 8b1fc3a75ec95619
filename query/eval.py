"""Retrieval metrics over ranked document ids, with trec_eval's definitions (which BEIR reports through
pytrec_eval): nDCG@k with the grade itself as the gain (trec_eval's `ndcg_cut`, not the 2^grade - 1 of some
other toolkits) and the ideal ranking built from every judged relevant document; recall@k over every
relevant document; reciprocal rank of the first relevant one. Identical on binary judgements."""

from __future__ import annotations

import math
from collections.abc import Callable
from os import PathLike


def recall_at(ranked: list[str], relevant: dict[str, int], k: int) -> float:
    wanted = {d for d, g in relevant.items() if g > 0}
    return len(wanted & set(ranked[:k])) / len(wanted) if wanted else 0.0


def hit_at(ranked: list[str], relevant: dict[str, int], k: int) -> float:
    return float(any(relevant.get(d, 0) > 0 for d in ranked[:k]))


def mrr(ranked: list[str], relevant: dict[str, int], k: int = 10) -> float:
    for rank, doc in enumerate(ranked[:k], 1):
        if relevant.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


def ndcg_at(ranked: list[str], relevant: dict[str, int], k: int = 10) -> float:
    dcg = sum(max(relevant.get(d, 0), 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((g for g in relevant.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def documents_in_order(document_ids: list[str]) -> list[str]:
    """Hits are sections: a document ranks where its first section does."""
    return list(dict.fromkeys(document_ids))


def summarise(runs: list[tuple[list[str], dict[str, int]]], k: int = 10) -> dict[str, float]:
    """Mean metrics over (ranked documents, relevance) pairs: the `cairn eval --json` "metrics" object."""
    n = max(1, len(runs))
    metric: dict[str, Callable[[list[str], dict[str, int]], float]] = {
        "ndcg@10": lambda r, q: ndcg_at(r, q, 10),
        "recall@1": lambda r, q: recall_at(r, q, 1),
        "recall@5": lambda r, q: recall_at(r, q, 5),
        f"recall@{k}": lambda r, q: recall_at(r, q, k),
        "mrr": lambda r, q: mrr(r, q, k),
        "hit@10": lambda r, q: hit_at(r, q, 10),
    }
    return {name: round(sum(f(r, q) for r, q in runs) / n, 4) for name, f in metric.items()}


def read_qrels(path: str | PathLike[str]) -> dict[str, dict[str, int]]:
    """BEIR qrels TSV (query-id, corpus-id, score; a header line is skipped) -> {query: {corpus id: grade}}."""
    qrels: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 3 or (number == 1 and not parts[2].lstrip("-").isdigit()):
                continue
            if int(parts[2]) > 0:
                qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    return qrels


def corpus_id(document_id: str, locator: str, relevant: dict[str, int]) -> str:
    """A qrels corpus-id names a document by its id or by its source path (with or without the suffix)."""
    stem = locator.rsplit(".", 1)[0] if "." in locator.rsplit("/", 1)[-1] else locator
    for alias in (document_id, locator, stem):
        if alias in relevant:
            return alias
    return document_id
