"""What Cairn embeds with, as a protocol: the bundled models (embedding/model.py ModelEncoder), the exported query
model of a `cairn[query]` service (embedding/query_model.py QueryModel) and the task-runner encoder of a Dask run
(flows/dask_runner.py) all answer to it, and the index and query layers are typed against it, not against one of
them."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Encoder(Protocol):
    @property
    def identity(self) -> str:
        """What a cache and a collection record: a different model or backend never reuses another's vectors."""
        ...

    @property
    def dim(self) -> int: ...

    def encode(self, texts: list[str], batch_size: int = ...) -> np.ndarray:
        """Documents (sections, chunks, abstracts) as they are: one L2-normalised float32 row per text."""
        ...

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """Questions, with the instruction the model was trained to see before one (if it has one)."""
        ...
