"""How token vectors become one sentence vector (mean or first token), and each model's cosine scale."""

from __future__ import annotations

import numpy as np
import pytest

from cairn.embedding.model import MODELS, cosine_scale, load_encoder
from cairn.embedding.onnx_runtime import pooled

HIDDEN = np.array(
    [
        [[3.0, 4.0], [1.0, 0.0], [9.0, 9.0]],  # the third token is padding
        [[0.0, 2.0], [2.0, 0.0], [2.0, 2.0]],
    ],
    dtype=np.float32,
)
MASK = np.array([[1, 1, 0], [1, 1, 1]])


def test_mean_pooling_ignores_padding_and_normalises():
    vectors = pooled(HIDDEN, MASK, "mean")
    assert np.allclose(vectors[0], np.array([2.0, 2.0]) / np.linalg.norm([2.0, 2.0]))
    assert np.allclose(vectors[1], np.array([4 / 3, 4 / 3]) / np.linalg.norm([4 / 3, 4 / 3]))


def test_cls_pooling_takes_the_first_token_whatever_follows():
    vectors = pooled(HIDDEN, MASK, "cls")
    assert np.allclose(vectors, [[0.6, 0.8], [0.0, 1.0]])


def test_a_cosine_is_put_on_the_settings_scale_of_the_model_that_made_it():
    assert cosine_scale("all-MiniLM-L6-v2/seq256/d384") == (1.0, 0.0)  # the scale the settings were set in
    a, b = cosine_scale("bge-small-en-v1.5/seq256/d384/onnx-int8")
    assert (
        (a, b) == MODELS["bge-small-en-v1.5"].cosine_scale and a > 1.0 and b < 0.0
    )  # bge's cosines are compressed upwards
    assert cosine_scale("hash-384") == (1.0, 0.0)  # an encoder Cairn does not know is taken as it is


def test_a_model_refuses_a_backend_it_does_not_ship_and_auto_picks_its_own():
    with pytest.raises(ValueError, match="bge-small-en-v1.5 runs with backend onnx-int8, not 'torch'"):
        load_encoder("bge-small-en-v1.5", "torch")
    assert load_encoder("bge-small-en-v1.5").backend == "onnx-int8"
    assert load_encoder("all-MiniLM-L6-v2", "auto").backend == "torch"
