"""Every encoder Cairn runs answers to the one Encoder protocol (embedding/encoder.py), without loading a model."""

from __future__ import annotations

import numpy as np

from cairn.embedding import Encoder, ModelEncoder, load_encoder


def test_the_bundled_models_are_encoders_without_loading_their_weights():
    from cairn.embedding.model import DEFAULT_ONNX_CACHE, MODELS

    # a new one: the process-wide encoder load_encoder hands out may have been loaded by another test here
    encoder = ModelEncoder(MODELS["all-MiniLM-L6-v2"], "torch", DEFAULT_ONNX_CACHE)
    assert isinstance(encoder, Encoder)
    assert (encoder.identity, encoder.dim, encoder.loaded) == ("all-MiniLM-L6-v2/seq256/d384", 384, False)
    shared = load_encoder("all-MiniLM-L6-v2", "torch")
    assert isinstance(shared, ModelEncoder) and shared.identity == encoder.identity


def test_an_object_missing_a_method_is_not_an_encoder():
    class NoQueries:
        identity = "x"
        dim = 2

        def encode(self, texts: list[str], batch_size: int = 8) -> np.ndarray:
            return np.zeros((len(texts), 2), dtype=np.float32)

    assert not isinstance(NoQueries(), Encoder)
