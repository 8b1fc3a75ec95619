"""What `GET /metrics` counts from one answer's diagnostics (serve/metrics.py), on hand-made results: the
dominance score (rule 25) and the empty results by why (#39). The live service's scrape is
tests/integration/test_serve.py."""

from __future__ import annotations

import pytest

from cairn.query import Hit, RetrievalResult
from cairn.serve.feedback import FeedbackStore
from cairn.serve.metrics import ServiceMetrics


@pytest.fixture
def metrics(tmp_path):
    return ServiceMetrics(FeedbackStore(tmp_path / "feedback.sqlite", keep_days=1))


def sample(metrics: ServiceMetrics, name: str) -> float:
    text = metrics.exposition().decode()
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.split(" ")[0] == name)


def hit(document_id: str) -> Hit:
    return Hit("c", document_id, "s", [], "T", "u", 0.8, "", "", "v", None, "")


def test_the_dominance_score_and_primary_fraction_before_the_gate_are_observed_for_every_answer(metrics):
    # rule 25 before the gate (#53): a scoped answer, where dominance does not run, is measured too
    before = {"dominance_score": 0.75, "primary_doc_fraction": 0.6, "documents": {"A": 3, "B": 2}}
    metrics.answered(RetrievalResult("q", [hit("A")], diagnostics={**before, "dominance": {"note": "gated"}}), 0.1)
    scoped = {"dominance_score": 0.55, "primary_doc_fraction": 0.5, "dominance": {"note": "not run: doc_tag"}}
    metrics.answered(RetrievalResult("q", [hit("B")], diagnostics=scoped), 0.1)
    assert sample(metrics, "cairn_dominance_score_count") == 2
    assert sample(metrics, "cairn_dominance_score_sum") == pytest.approx(1.3)
    assert sample(metrics, 'cairn_dominance_score_bucket{le="0.7"}') == 1
    assert sample(metrics, "cairn_primary_doc_fraction_sum") == pytest.approx(1.1)


def test_empty_answers_are_counted_by_why_they_are_empty(metrics):
    for reason in ("no_access", "no_access", "below_floors"):
        metrics.answered(RetrievalResult("q", [], status="no_results", empty_reason=reason), 0.1)
    metrics.answered(RetrievalResult("q", [hit("A")]), 0.1)
    assert sample(metrics, 'cairn_empty_results_total{reason="no_access"}') == 2
    assert sample(metrics, 'cairn_empty_results_total{reason="below_floors"}') == 1
    assert sample(metrics, 'cairn_empty_results_total{reason="out_of_scope"}') == 0  # present from the start
    assert sample(metrics, 'cairn_retrieve_requests_total{status="no_results"}') == 3


def test_a_storm_of_scrapes_is_paced_bounded_and_sees_each_change(tmp_path, monkeypatch):
    """Issue #51: clients looping on /metrics kept a worker busy; scrapes now wait their turn (costing nothing),
    reuse the last text while nothing changed, and beyond MAX_SCRAPES_WAITING are refused at once."""
    import asyncio

    from cairn.schemas.config import CairnConfig
    from cairn.serve import service as core
    from cairn.serve.errors import ScrapesWaiting

    monkeypatch.setattr(core, "SCRAPE_INTERVAL_SECONDS", 0.01)
    monkeypatch.setattr(core, "SCRAPE_REUSE_SECONDS", 600.0)  # nothing changes during the storm: one text
    built = []
    config = CairnConfig.model_validate({"state_path": str(tmp_path / "state.sqlite")})
    served = core.Service(config)
    real = served.metrics.exposition
    monkeypatch.setattr(served.metrics, "exposition", lambda: built.append(1) or real())

    async def storm():
        return await asyncio.gather(
            *(served.exposition() for _ in range(core.MAX_SCRAPES_WAITING + 8)), return_exceptions=True
        )

    outcomes = asyncio.run(storm())
    refused = [o for o in outcomes if isinstance(o, ScrapesWaiting)]
    assert len(refused) == 8 and len(built) == 1  # one text built; the others reused it
    served.metrics.reject("invalid")  # a change: the next scrape shows it
    assert b'cairn_rejected_requests_total{reason="invalid"} 1.0' in asyncio.run(served.exposition())
    served.close()
