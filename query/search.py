"""Step 3's reads: the search legs (dense full text, dense abstract, BM25) over child rows, read into
Candidates with each leg's score."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cairn.embedding.model import cosine_scale
from cairn.index.protocol import IndexReader
from cairn.query.gate import STOPWORDS
from cairn.query.types import Candidate
from cairn.schemas.collection import SEARCH_FIELDS, analyzed
from cairn.schemas.config import QueryConfig
from cairn.schemas.row_filter import RowFilter
from cairn.schemas.rows import ChunkRow, ScoredRow

DENSE_LEGS = (("full_text_embedding", "dense_leg"), ("abstract_embedding", "abstract_leg"))  # (field, step)


@dataclass
class Found:
    """What the legs found: every candidate, the ranked id lists for fusion, and the full-text leg's candidates
    (what the sparse-document guarantee inspects)."""

    candidates: list[Candidate]
    rankings: list[list[str]]
    dense: list[Candidate]


class Search:
    """One query's searches through the generation it reads, scored on the scale of the encoder that embedded
    the query (the serving collection's: query/serving.py)."""

    def __init__(self, reader: IndexReader, settings: QueryConfig, encoder_identity: str) -> None:
        self.reader = reader
        self.settings = settings
        self.encoder_identity = encoder_identity

    def legs(self, text: str, vectors: list[list[float]], where: RowFilter, limit: int) -> Found:
        """Run the enabled legs, each pre-filtered by `where` inside the engine."""
        on = self.settings.enabled
        found: dict[str, Candidate] = {}
        rankings: list[list[str]] = []
        dense: dict[str, Candidate] = {}  # insertion-ordered; keyed by id (a dataclass compares field by field)

        def candidate(hit: ScoredRow) -> Candidate:
            row = hit.row
            if row.chunk_id not in found:
                found[row.chunk_id] = Candidate(
                    row.chunk_id,
                    row.parent_chunk_id,
                    row.document_id,
                    row.section_id,
                    row.section_order,
                    row.title,
                    row.breadcrumbs,
                    row.text,
                    row.token_count,
                    version_hash=row.version_hash,
                    updated_at=row.updated_at,
                    temporal_start=row.temporal_start,
                )
            return found[row.chunk_id]

        for field in [f for f, step in DENSE_LEGS if on(step)]:
            for per_seed in self.reader.search_dense(field, vectors, where, limit):
                ranking = []
                for hit in per_seed:
                    c = candidate(hit)
                    c.vector = max(c.vector, self.relevance(hit.score))
                    ranking.append(c.chunk_id)
                    if field == "full_text_embedding":  # the score is the cosine: 1 - it is the cosine distance
                        c.distance = min(c.distance if c.distance is not None else 2.0, 1.0 - hit.score)
                        dense.setdefault(c.chunk_id, c)
                rankings.append(ranking)
        if on("keyword_leg"):
            ranking = []
            # with the text BM25 ranked (a match must share a content word) and the full-text vector (a
            # keyword-only candidate's cosine is computed here, not read again by id)
            fields = [*SEARCH_FIELDS, "search_text", *(["full_text_embedding"] if on("dense_leg") else [])]
            carried: dict[str, list[float]] = {}
            terms = keyword_terms(text)
            matches = [
                hit for hit in self.reader.search_bm25(text, where, limit, fields) if shares_a_term(hit.row, terms)
            ]
            for rank, hit in enumerate(matches, 1):
                c = candidate(hit)
                c.keyword = hit.score
                c.keyword_rank = rank
                ranking.append(c.chunk_id)
                if hit.row.full_text_embedding is not None:
                    carried[c.chunk_id] = hit.row.full_text_embedding
            rankings.append(ranking)
            self._fill_vectors([c for c in found.values() if c.vector == 0.0], vectors[0], carried)
        return Found(list(found.values()), rankings, list(dense.values()))

    def relevance(self, cosine: float) -> float:
        """A cosine of the serving encoder on the scale the settings are in (embedding/model.py cosine_scale)."""
        a, b = cosine_scale(self.encoder_identity)
        return a * cosine + b

    def _fill_vectors(
        self, candidates: list[Candidate], query_vector: list[float], carried: dict[str, list[float]]
    ) -> None:
        """Keyword-only candidates get their true cosine, so the floors judge them like the others: from the vector
        their BM25 hit carried, else (a reader that did not return it) read by id."""
        if not candidates or not self.settings.enabled("dense_leg"):
            return
        by_id = {c.chunk_id: c for c in candidates}
        missing = [i for i in by_id if i not in carried]
        read = self.reader.rows(missing, ["chunk_id", "full_text_embedding"]) if missing else []
        vectors = {**carried, **{r.chunk_id: r.full_text_embedding for r in read if r.full_text_embedding is not None}}
        for chunk_id, vector in vectors.items():
            if chunk_id not in by_id:
                continue
            raw = cosine(vector, query_vector)
            by_id[chunk_id].vector = self.relevance(raw)
            by_id[chunk_id].distance = 1.0 - raw


def keyword_terms(text: str) -> frozenset[str]:
    """The question's content words as the BM25 analyzer splits them: what a keyword match must share with it."""
    return frozenset(w for w in analyzed(text) if len(w) > 1 and w not in STOPWORDS)


def shares_a_term(row: ChunkRow, terms: frozenset[str]) -> bool:
    """Whether a BM25 hit holds one of the question's content words (`terms`; a question of stop words alone:
    any hit). The leg searches for the whole question, as the engine weighs it: a stop word that carries a
    clause ("obligations after the termination") and a word said twice count (#53: the content words alone cost
    CUAD's answers in the top 5 0.841 -> 0.823). But a section matching only "the" or "how" would top the leg and
    have its score normalised to a perfect keyword match (query/fusion.py): it is no keyword match."""
    if not terms:
        return True
    text = row.search_text or " ".join([row.title, *row.breadcrumbs, row.text])
    return not terms.isdisjoint(analyzed(text))


def cosine(vector: list[float], query_vector: list[float]) -> float:
    v, q = np.asarray(vector, dtype=np.float32), np.asarray(query_vector, dtype=np.float32)
    return float(v @ q / ((np.linalg.norm(v) * np.linalg.norm(q)) or 1.0))
