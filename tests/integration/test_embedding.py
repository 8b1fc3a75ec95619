"""The embedding backends with the real bundled model: torch, and the int8 ONNX export run by onnxruntime;
and the collection refusing vectors from an encoder other than the one that filled it."""

from __future__ import annotations

import numpy as np
import pytest

from cairn.embedding import ModelEncoder, load_encoder
from cairn.embedding.model import encoder_for_identity
from cairn.embedding.session_cache import FOLDER as OPTIMIZED
from cairn.errors import StoreError
from cairn.index.store import MilvusStore
from cairn.query import RetrievalError, Retriever
from cairn.schemas.config import MilvusConfig, QueryConfig, parse_config

TEXTS = [
    "Fail over the ledger-db primary: promote the replica, then repoint the write endpoint.",
    "The TLS certificate on the edge proxy expired; renew it with cert-manager and reload nginx.",
    "Kubelet reports DiskPressure when the node's image filesystem is over 85% full.",
    "Section 4.2 Termination. Either party may terminate this Agreement upon thirty days written notice.",
    "short",
    " ".join(["a much longer input that the model truncates at 256 word pieces"] * 60),
]


@pytest.fixture(scope="module")
def onnx_encoder(onnx_cache) -> ModelEncoder:
    return load_encoder("all-MiniLM-L6-v2", "onnx-int8", onnx_cache)


def test_onnx_int8_vectors_are_close_to_torch_and_keep_the_ranking(onnx_encoder):
    exact = load_encoder("all-MiniLM-L6-v2").encode(TEXTS)
    quantised = onnx_encoder.encode(TEXTS, batch_size=4)  # batches sorted by length, put back in order
    assert quantised.shape == exact.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(quantised, axis=1), 1.0, atol=1e-4)
    cosines = (quantised * exact).sum(axis=1)
    assert cosines.min() > 0.95, cosines
    # each text's nearest neighbour among the torch vectors is its own
    assert list((quantised @ exact.T).argmax(axis=1)) == list(range(len(TEXTS)))


def test_the_export_is_made_once_and_reused(onnx_encoder, tmp_path):
    onnx_encoder.encode(["load it"])
    path = onnx_encoder.model().path
    exports = [p for p in path.parent.parent.iterdir() if p.name != OPTIMIZED]  # beside it: the sessions' graphs
    assert [p.name for p in exports] == [path.parent.name]  # no scratch folder left behind
    assert all(p.name.startswith("graph-") for p in (path.parent.parent / OPTIMIZED).iterdir())  # nor a scratch file
    stamp = path.stat().st_mtime_ns
    again = ModelEncoder(onnx_encoder.spec, "onnx-int8", onnx_encoder.onnx_cache)  # a fresh process would do this
    assert np.allclose(again.encode(TEXTS[:2]), onnx_encoder.encode(TEXTS[:2]), atol=1e-6)
    assert again.model().path == path and path.stat().st_mtime_ns == stamp


def test_backends_have_their_own_identity():
    torch_identity = load_encoder("all-MiniLM-L6-v2").identity
    assert torch_identity == "all-MiniLM-L6-v2/seq256/d384"  # unchanged: existing embedding caches stay valid
    assert load_encoder("all-MiniLM-L6-v2", "onnx-int8").identity == torch_identity + "/onnx-int8"
    with pytest.raises(ValueError, match="backend 'fp16'"):
        load_encoder("all-MiniLM-L6-v2", "fp16")
    with pytest.raises(Exception, match="backend"):
        parse_config({"embedding": {"backend": "tensorrt"}}, "test.toml")


def test_a_collection_refuses_writers_of_another_encoder_and_readers_embed_with_its_own(tmp_path, onnx_encoder):
    milvus = MilvusConfig(uri=str(tmp_path / "index" / "cairn.db"), collection="labelled")
    torch_encoder = load_encoder("all-MiniLM-L6-v2")
    store = MilvusStore(milvus, 384)
    store.ensure_collection(embedder=torch_encoder.identity)
    store.ensure_collection(embedder=torch_encoder.identity)  # the same encoder again is fine
    with pytest.raises(StoreError, match="all-MiniLM-L6-v2/seq256/d384'.*onnx-int8"):
        store.ensure_collection(embedder=onnx_encoder.identity)  # (an ingest rebuilds beside it: test_reindex.py)
    # a reader configured for onnx-int8 embeds its queries with the encoder the collection records
    assert (
        Retriever(milvus, QueryConfig(), onnx_encoder, client=store.client).encoder.identity == torch_encoder.identity
    )
    assert Retriever(milvus, QueryConfig(), torch_encoder, client=store.client).encoder is torch_encoder
    store.close()


def test_a_reader_that_cannot_run_the_collections_encoder_says_so(tmp_path):
    milvus = MilvusConfig(uri=str(tmp_path / "index" / "cairn.db"), collection="other")
    store = MilvusStore(milvus, 384)
    store.ensure_collection(embedder="some-other-model/seq512/d384")
    with pytest.raises(RetrievalError, match="'some-other-model/seq512/d384'.*cannot load the other"):
        Retriever(milvus, QueryConfig(), load_encoder("all-MiniLM-L6-v2"), client=store.client)
    store.close()


def test_a_collection_from_before_labels_is_labelled_by_its_next_writer(tmp_path):
    milvus = MilvusConfig(uri=str(tmp_path / "index" / "cairn.db"), collection="old")
    store = MilvusStore(milvus, 384)
    store.ensure_collection()  # as a reader or an older Cairn made it: no label
    assert "cairn.embedder" not in (store.client.describe_collection("old").get("properties") or {})
    store.ensure_collection(embedder="all-MiniLM-L6-v2/seq256/d384")
    assert store.client.describe_collection("old")["properties"]["cairn.embedder"] == "all-MiniLM-L6-v2/seq256/d384"
    with pytest.raises(StoreError):
        store.ensure_collection(embedder="all-MiniLM-L6-v2/seq256/d384/onnx-int8")
    store.close()


@pytest.mark.core
def test_bge_small_runs_from_its_package_file_and_reads_questions_with_its_instruction():
    bge = load_encoder("bge-small-en-v1.5")
    assert bge.identity == "bge-small-en-v1.5/seq256/d384/onnx-int8"
    passages = bge.encode(TEXTS)
    assert passages.shape == (len(TEXTS), 384) and np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-4)
    questions = [
        "how do I fail over ledger-db",
        "edge proxy certificate expired",
        "node disk pressure image filesystem",
        "how much notice to end the contract",
    ]
    asked = bge.encode_queries(questions)
    assert list((asked @ passages[:4].T).argmax(axis=1)) == [0, 1, 2, 3]
    # the instruction is part of what a question embeds; a passage gets none
    assert not np.allclose(asked[0], bge.encode(questions[:1])[0], atol=1e-3)
    assert np.allclose(bge.encode(TEXTS[:1])[0], passages[0], atol=1e-5)
    # a reader of a bge collection embeds with bge, whatever its own configuration names
    assert encoder_for_identity(bge.identity) is bge
    with pytest.raises(ValueError, match="bge-small-en-v1.5/seq256/d384' is not one this install can run"):
        encoder_for_identity("bge-small-en-v1.5/seq256/d384")  # no torch build of it exists
