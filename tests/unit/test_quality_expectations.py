"""The expectations as data (quality/expectations.py) and the results counted from rows' outcomes
(quality/tallies.py), without great-expectations: which rows each check looks at, how its verdict follows from
its counts, what a row's outcome is kept against, and results that add up across rows checked at different
times."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cairn.quality.expectations import (
    ABSTRACTED,
    CHILD_CHECKED,
    SIZE_SLOTS,
    SIZED,
    Check,
    bands,
    checked_masks,
    metadata_checks,
    scoped,
    signature,
)
from cairn.quality.tallies import SLOTS, Tallies, results_of, tally
from cairn.schemas.config import CairnConfig

DIM = 384


def row(n: int, chunk_type: str = "full_text", tokens: float | None = 500, **extra) -> dict:
    base = {
        "chunk_id": f"c{n}",
        "document_id": f"d{n // 10}",
        "section_id": f"s{n}",
        "locator": f"page{n // 10}.md",
        "parent_chunk_id": None if chunk_type == "full_text" else f"c{n // 10 * 10}",
        "chunk_type": chunk_type,
        "token_count": tokens,
        "tenant_id": "acme",
        "version_hash": "v",
        "temporal_start": 1,
        "temporal_end": 2,
        "source_uri": "file:///x",
        "source_name": "wiki",
        "source_type": "wiki",
        "content_type": "runbook",
        "environment": "production",
        "severity": "sev2",
        "acl_size": 1,
        "text_length": 10,
        "abstract_token_count": 150,
        "chunk_health_score": 1.0,
        "whole_document": False,
        "is_remainder": False,
        "parent_exists": True,
        "abstract_embedding_dim": DIM,
        "full_text_embedding_dim": DIM,
    }
    return {**base, **extra}


def test_each_size_check_looks_only_at_the_rows_it_judges():
    frame = pd.DataFrame(
        [
            row(0, tokens=120, whole_document=True),  # a short page, whole: exempt from the parent band and health
            row(1, tokens=120),  # a section under the band: judged
            row(2, tokens=500, whole_document=True),  # whole but inside the band: judged
            row(3, "child", tokens=10, is_remainder=True),  # a stretch's remainder: exempt from the child band
            row(4, "child", tokens=150),
            row(5, tokens=80),  # shorter than the abstract band's floor: its abstract cannot fill it
        ]
    )
    with_scopes = scoped(frame, bands(CairnConfig(), "wiki", "runbook"))
    assert with_scopes[SIZED].tolist() == [False, True, True, False, False, True]
    assert with_scopes[ABSTRACTED].tolist() == [True, True, True, False, False, False]
    assert with_scopes[CHILD_CHECKED].tolist() == [False, False, False, False, True, False]
    masks = checked_masks(frame, CairnConfig(), DIM)
    child_band = 1 << SIZE_SLOTS["child token_count"]
    assert [bool(m & child_band) for m in masks] == [False, False, False, False, True, False]
    assert all(m & 1 for m in masks), "every row is looked at by the metadata checks"


def test_a_null_is_missing_except_to_a_not_null_check_and_a_pair_check_skips_only_rows_missing_both():
    frame = pd.DataFrame({"tenant_id": [None, "a"], "temporal_end": [None, None], "temporal_start": [None, 1]})
    not_null, pair = (
        next(c for c in metadata_checks(DIM) if c.label == name)
        for name in ("tenant_id", "temporal_end >= temporal_start")
    )
    assert not_null.looked_at(frame).tolist() == [True, True]
    assert pair.looked_at(frame).tolist() == [False, True]
    between = Check("x", "ExpectColumnValuesToBeBetween", {"column": "tenant_id", "min_value": 1})
    assert between.looked_at(frame).tolist() == [False, True]


def test_a_verdict_follows_great_expectations_rule_of_mostly():
    strict = Check("x", "ExpectColumnValuesToBeBetween", {"column": "x", "min_value": 1})
    mostly = Check("x", "ExpectColumnValuesToBeBetween", {"column": "x", "min_value": 1, "mostly": 0.95})
    assert strict.passes(0, 0) and strict.passes(100, 0) and not strict.passes(100, 1)
    assert mostly.passes(100, 5) and not mostly.passes(100, 6)


def test_a_row_is_checked_again_when_what_judges_it_changed_but_not_for_a_new_mostly():
    before = signature(CairnConfig(), DIM, "wiki", "runbook")
    assert signature(CairnConfig(), DIM, "wiki", "runbook") == before
    assert signature(CairnConfig(), 768, "wiki", "runbook") != before
    narrower = CairnConfig.model_validate({"quality": {"overrides": {"runbook": {"parent_max_tokens": 800}}}})
    assert signature(narrower, DIM, "wiki", "runbook") != before
    assert signature(narrower, DIM, "wiki", "incident") == signature(CairnConfig(), DIM, "wiki", "incident")
    looser = CairnConfig.model_validate({"quality": {"overrides": {"runbook": {"parent_mostly": 0.5}}}})
    assert signature(looser, DIM, "wiki", "runbook") == before


def outcomes(sizes: list[int], failing: set[int]) -> pd.DataFrame:
    """Sections of these token counts, their outcomes as validate would give them (the parent band failed by
    the rows in `failing`)."""
    frame = pd.DataFrame([row(10 * i, tokens=t) for i, t in enumerate(sizes)])
    band = 1 << SIZE_SLOTS["full_text token_count"]
    failed = [band if i in failing else 0 for i in range(len(sizes))]
    return frame.assign(checked=checked_masks(frame, CairnConfig(), DIM), failed=failed)


def test_results_count_rows_and_failures_per_check_with_examples():
    checked = outcomes([500, 1200, 600, 1500], failing={1, 3})
    results = {r.column: r for r in results_of(tally(checked, limit=1), CairnConfig(), DIM)}
    band = results["full_text token_count"]
    assert (band.suite, band.element_count, band.unexpected_percent, band.success) == ("wiki.runbook", 4, 50.0, False)
    assert band.expectation == "expect_column_values_to_be_between" and band.params["mostly"] == 0.95
    assert [e["chunk_id"] for e in band.examples] == ["c10"]  # one example asked for
    assert results["tenant_id"].suite == "wiki" and results["tenant_id"].success
    assert len(results_of(tally(checked, 1), CairnConfig(), DIM)) == 17 + 4


def test_counts_of_rows_checked_at_different_times_add_up_to_the_counts_of_checking_them_together():
    early, late = outcomes([500, 1200], {1}), outcomes([600, 700, 1500], {2})
    late["chunk_id"] = late["chunk_id"] + "b"
    together = pd.concat([early, late], ignore_index=True)
    combined = tally(early, 5).add(tally(late, 5), 5)
    assert {k: v.tolist() for k, v in combined.counts.items()} == {
        k: v.tolist() for k, v in tally(together, 5).counts.items()
    }
    assert [r.to_dict() for r in results_of(combined, CairnConfig(), DIM)] == [
        r.to_dict() for r in results_of(tally(together, 5), CairnConfig(), DIM)
    ]


def test_no_rows_no_results():
    assert results_of(Tallies(), CairnConfig(), DIM) == []
    assert tally(outcomes([500], set()).iloc[:0], 5).counts == {}
    assert SLOTS == 21 and np.int64(1) << (SLOTS - 1) > 0
