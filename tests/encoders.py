"""A small deterministic encoder for tests of what surrounds the model (the sync, the store): a hashing bag of
words, normalised, in 16 dimensions. It is an Encoder (embedding/encoder.py) that needs no weights."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from cairn.embedding import ModelEncoder
from cairn.embedding.model import BATCH_SIZE, ModelSpec

HASHING = ModelSpec("hashing-bag-of-words", package="", dim=16, max_seq_length=256, backends=("torch",))


@dataclass
class HashingEncoder(ModelEncoder):
    spec: ModelSpec = field(default=HASHING)

    def encode(self, texts: list[str], batch_size: int = BATCH_SIZE) -> np.ndarray:
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            vectors[row, 0] = 1e-3  # never the zero vector (cosine has no direction for it)
            for word in text.lower().split():
                bucket = int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=4).digest(), "little")
                vectors[row, bucket % self.dim] += 1.0
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
