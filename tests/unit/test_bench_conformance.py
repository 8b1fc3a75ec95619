"""bench.conformance's verdict (bench/conformance.py): a behaviour passes only when the URI observed exactly what the
embedded engine did, and a probe the embedded engine itself failed never passes (the engines themselves:
tests/integration/test_conformance.py)."""

from __future__ import annotations

from bench.conformance import BEHAVIOURS, verdicts

LABELS = [label for label, _ in BEHAVIOURS]


def observed(**changed) -> dict:
    seen = {label: {"sign": "negative", "order": ["c1", "c2"]} for label in LABELS}
    seen.update(changed)
    return seen


def test_the_same_observations_pass_every_behaviour_in_order():
    results = verdicts(observed(), observed())
    assert [r["behaviour"] for r in results] == LABELS and all(r["same"] for r in results)


def test_a_server_whose_bm25_scores_are_positive_differs_and_says_both():
    sign = LABELS[0]
    there = observed(**{sign: {"sign": "positive", "order": ["c1", "c2"]}})
    (result,) = [r for r in verdicts(there, observed()) if not r["same"]]
    assert (
        result["behaviour"] == sign and result["uri"]["sign"] == "positive" and result["embedded"]["sign"] == "negative"
    )


def test_a_probe_the_embedded_engine_failed_is_never_a_pass():
    broken = {"error": "MilvusException: no such call"}
    results = verdicts(observed(**{LABELS[3]: broken}), observed(**{LABELS[3]: broken}))
    assert [r["behaviour"] for r in results if not r["same"]] == [LABELS[3]]
    assert [r["behaviour"] for r in verdicts({}, observed()) if not r["same"]] == LABELS  # nothing observed there
