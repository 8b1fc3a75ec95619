"""The physical limit of one question on this machine, measured beside retrieve() in the same run: a brute-force
cosine top-50 over N x 384 float32 (numpy) plus a BM25 top-50 over a sparse term matrix of N rows (scipy), the two
legs a retrieve() runs, with nothing indexed. The benchmarks print retrieve p95 over this p95 (issue #52: within
10x at 100k rows).

    limit = BruteForce(rows)          # N random unit vectors; N rows of 120 Zipf-drawn terms, BM25-weighted
    ms = limit.question(seed)         # one question's two top-50s, wall ms
"""

from __future__ import annotations

import time

import numpy as np

DIM = 384
VOCAB = 30_000  # terms; drawn by a Zipf law, so common terms have long postings, as in text
TERMS_PER_ROW = 120
QUERY_TERMS = 5
TOP = 50


class BruteForce:
    """N rows' vectors and BM25 term weights in memory, searched by brute force."""

    def __init__(self, rows: int, seed: int = 52) -> None:
        from scipy import sparse

        rng = np.random.default_rng(seed)
        vectors = rng.standard_normal((rows, DIM), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        self.vectors = vectors
        ranks = np.arange(1, VOCAB + 1, dtype=np.float64)
        self.cdf = np.cumsum(1.0 / ranks) / (1.0 / ranks).sum()
        terms = self.draw(rng, (rows, TERMS_PER_ROW))
        tf = sparse.csr_matrix(
            (np.ones(terms.size, np.float32), (np.repeat(np.arange(rows), TERMS_PER_ROW), terms.ravel())),
            shape=(rows, VOCAB),
        )
        tf.sum_duplicates()
        df = np.bincount(tf.indices, minlength=VOCAB)
        idf = np.log(1 + (rows - df + 0.5) / (df + 0.5)).astype(np.float32)
        k1, b, length = 1.2, 0.75, TERMS_PER_ROW  # every row the same length: avgdl == dl
        tf.data = tf.data * (k1 + 1) / (tf.data + k1 * (1 - b + b * length / length))
        self.weights = (tf @ sparse.diags(idf)).tocsc()
        self.rng = rng

    def draw(self, rng: np.random.Generator, shape: int | tuple[int, int]) -> np.ndarray:
        """Term ids drawn by the Zipf law."""
        return np.minimum(np.searchsorted(self.cdf, rng.random(shape)), VOCAB - 1)

    def question(self) -> float:
        """One question: a random unit query vector and QUERY_TERMS Zipf-drawn terms; both top-50s. Wall ms."""
        q = self.rng.standard_normal(DIM).astype(np.float32)
        q /= np.linalg.norm(q)
        terms = np.unique(self.draw(self.rng, QUERY_TERMS))
        started = time.perf_counter()
        scores = self.vectors @ q
        top = np.argpartition(-scores, TOP)[:TOP]
        top[np.argsort(-scores[top])]
        bm25 = np.asarray(self.weights[:, terms].sum(axis=1)).ravel()
        best = np.argpartition(-bm25, TOP)[:TOP]
        best[np.argsort(-bm25[best])]
        return (time.perf_counter() - started) * 1000
