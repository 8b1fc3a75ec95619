"""bench.eval's variants: each a set of QueryConfig overrides, with the label its row of the ablation table carries
(bench/eval_table.py). The reranker's sweep (`TUNING`) is run on the tuning half of SciFact only."""

from __future__ import annotations

from cairn.schemas.config import QueryConfig

_DEFAULTS = QueryConfig()
# the reranker on every question, blended 0.5 with the fusion (#53: the one stage measured to help on unseen
# questions); the variants below differ in how many candidates it reads and how much of each
_EVERY = {
    "steps": {"rerank": True},
    "rerank_band": (0.0, 2.0),
    "rerank_weight": 0.5,
    "rerank_model": "ms-marco-MiniLM-L-12-v2",
}
# the sweep the reranker's defaults were chosen by, on the tuning half of SciFact dev only (`--variants tuning
# --half tune`, #53); the table shows the candidates it kept, on every question of the three sets
TUNING: dict[str, dict] = {
    "rerank_every_top5_64": {**_EVERY, "rerank_top": 5, "rerank_tokens": 64},
    "rerank_every_top10_64": {**_EVERY, "rerank_top": 10, "rerank_tokens": 64},
    "rerank_every_top5_128": {**_EVERY, "rerank_top": 5, "rerank_tokens": 128},
    "rerank_every_top10_128": {**_EVERY, "rerank_top": 10, "rerank_tokens": 128},
    "rerank_every_top20_512": {**_EVERY, "rerank_top": 20, "rerank_tokens": 512},
}
# name -> QueryConfig overrides
VARIANTS: dict[str, dict] = {
    "full": {},
    "no_gate": {"steps": {"gate": False}},
    "no_floors": {"steps": {"floors": False}},
    # the reranker (rule 11): each variant spelled out whole, so that a change of default moves no row
    "no_rerank": {"steps": {"rerank": False}},
    "rerank_every_top5_64": {**_EVERY, "rerank_top": 5, "rerank_tokens": 64},
    "rerank_every_top10_64": {**_EVERY, "rerank_top": 10, "rerank_tokens": 64},
    "rerank_every_top5_128": {**_EVERY, "rerank_top": 5, "rerank_tokens": 128},
    "no_sparse_doc_recall": {"steps": {"sparse_doc_recall": False}},
    "answer_floors": {"floor_scope": "answer"},
    "no_dominance": {"steps": {"dominance": False}},
    "dominance_orders": {"dominance_gate": False},
    "no_expansion": {"steps": {"expansion": False}},
    "no_diversity": {"steps": {"diversity": False}},
    "sparse_doc_calibrated": {"sparse_doc_max_distance": 0.13},
    "with_abstract_leg": {"steps": {"abstract_leg": True}},
    "rrf_fusion": {"fusion": "rrf"},
    "unscoped_weights": {
        "vector_weight_scoped": _DEFAULTS.vector_weight,
        "keyword_weight_scoped": _DEFAULTS.keyword_weight,
    },
    "spec_fusion": {
        "vector_weight": 0.65,
        "keyword_weight": 0.35,
        "vector_weight_scoped": 0.65,
        "keyword_weight_scoped": 0.35,
        "combined_floor": 0.45,
        "combined_floor_scoped": 0.45,
    },
    "spec_gate": {"gate_min_terms_scoped": _DEFAULTS.gate_min_terms, "gate_symptoms": False},
    "dense_only": {"steps": {"keyword_leg": False, "floors": False}},
    "bm25_only": {"steps": {"dense_leg": False, "floors": False}},
}

LABELS = {
    "full": "**the default pipeline**",
    "no_gate": "without the query gate",
    "no_floors": "without the relevance floors",
    "no_rerank": "without the reranker",
    "rerank_every_top5_64": "reranking every question: its top 5, 64 word pieces each (cross-encoder, blended 0.5)",
    "rerank_every_top10_64": "reranking every question: its top 10, 64 word pieces each",
    "rerank_every_top5_128": "reranking every question: its top 5, 128 word pieces each",
    "rerank_every_top10_128": "reranking every question: its top 10, 128 word pieces each",
    "rerank_every_top20_512": "reranking every question: its top 20, 512 word pieces each (0.6's variant)",
    "no_sparse_doc_recall": "without the short-document recall guarantee",
    "answer_floors": "floors do not guard citations: every candidate ranked once one passes (0.5)",
    "no_dominance": "without the dominance step (no gate, no main document first)",
    "dominance_orders": "dominance orders instead of gating: main document first, others kept (0.5)",
    "no_expansion": "without neighbour expansion",
    "no_diversity": "without diversity (2 sections a document)",
    "sparse_doc_calibrated": "short-document ceiling 0.13 raw (0.20 on the calibrated scale, as 0.5 read it)",
    "with_abstract_leg": "with the abstract-vector leg (off by default)",
    "rrf_fusion": "RRF fusion instead of the weighted sum (Cairn 0.3)",
    "unscoped_weights": (
        f"scoped questions weighted as the others ({_DEFAULTS.vector_weight} / {_DEFAULTS.keyword_weight}, "
        f"not {_DEFAULTS.vector_weight_scoped} / {_DEFAULTS.keyword_weight_scoped})"
    ),
    "spec_fusion": "the spec's fusion: 0.65 / 0.35 for every question, combined floor 0.45",
    "spec_gate": f"the spec's gate: {_DEFAULTS.gate_min_terms} content words or an ID, no symptom or scope relief",
    "dense_only": "dense leg only (no BM25, no floors)",
    "bm25_only": "BM25 only (no dense, no floors)",
}
