"""Epoch seconds and ISO dates at the edge of what a datetime holds (issue #51: `from_epoch` overflowed on a row's
or a caller's far value, and `parse_day` accepted year 1 east of UTC, which is year 0)."""

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn.schemas.records import EPOCH_FIRST, TEMPORAL_OPEN, from_epoch, parse_day


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_from_epoch_is_total_over_int64(value):
    when = from_epoch(value)
    assert when is None if value >= TEMPORAL_OPEN else when.tzinfo is UTC


def test_from_epoch_matches_the_clock_inside_the_years_and_clamps_below_them():
    for value in (0, 1_700_000_000, -1_000_000_000, TEMPORAL_OPEN - 1):
        assert from_epoch(value) == datetime.fromtimestamp(value, tz=UTC)
    assert from_epoch(EPOCH_FIRST) == from_epoch(-(2**63)) == datetime(1, 1, 1, tzinfo=UTC)


def test_parse_day_refuses_an_instant_outside_the_years_1_to_9999():
    assert parse_day("0001-01-01") == EPOCH_FIRST and parse_day("9999-12-31T23:59:59Z") == TEMPORAL_OPEN
    for value in ("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-00:01"):
        with pytest.raises(ValueError, match="outside the years 1 to 9999"):
            parse_day(value)
