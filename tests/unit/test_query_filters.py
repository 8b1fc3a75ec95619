"""The query's filter (a RowFilter: its Milvus expression and its row check): default deny, escaped literals,
allow-listed metadata, time semantics."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn.query.filters import FilterError, access_of, checked_metadata, search_filter
from cairn.schemas import Principal
from cairn.schemas.collection import quote
from cairn.schemas.row_filter import RowFilter
from cairn.schemas.rows import ChunkRow


def search_expr(principal, as_of, doc_tag, filters):
    return search_filter(principal, as_of, doc_tag, filters).expr


def time_filter(as_of):
    return access_of(Principal("acme", ["sre"]), as_of).expr.split(") and ", 1)[1]


def metadata_filter(filters):
    return RowFilter(metadata=checked_metadata(filters)).expr


HOSTILE = ['x" or tenant_id != "', 'a\\" || 1==1 || "', "') or true or ('", "%", "*", 'acme" or "1"=="1']


def test_time_filter_defaults_to_current_rows_and_as_of_uses_the_bounds():
    assert time_filter(None) == "is_current == true"
    assert time_filter(1_700_000_000) == "temporal_start <= 1700000000 and temporal_end > 1700000000"
    with pytest.raises(FilterError):
        time_filter("1700000000 or true")
    assert time_filter(-(2**63)).startswith("temporal_start <= -9223372036854775808")
    for far in (10**30, 2**63, -(2**63) - 1):  # past the Int64 fields: Milvus refused the expression with its own error
        with pytest.raises(FilterError, match=f"as_of {far} is out of range"):
            time_filter(far)


def test_unknown_filter_fields_are_refused_with_the_allowed_list():
    with pytest.raises(FilterError, match="unknown filter field 'tenant_id'.*allowed: content_type"):
        metadata_filter({"tenant_id": "globex"})
    with pytest.raises(FilterError, match="needs a string"):
        metadata_filter({"severity": 3})
    with pytest.raises(FilterError, match="filter fields are names .str., got 1; allowed: content_type"):
        metadata_filter({1: "x", "severity": "sev1"})  # sorting mixed keys raised a bare TypeError


def test_filters_become_escaped_conditions():
    expr = metadata_filter({"service_name": "ledger", "tags": ["db", 'x"y'], "severity": ["sev1", "sev2"]})
    assert expr == (
        'service_name in ["ledger"] and severity in ["sev1", "sev2"] and ARRAY_CONTAINS_ANY(tags, ["db", "x\\"y"])'
    )


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_doc_tag_and_filters_stay_inside_their_literals(hostile):
    expr = search_expr(Principal("acme", ["sre"]), None, hostile, {"service_name": hostile})
    assert f"doc_tag == {quote(hostile)}" in expr
    assert f"service_name in [{quote(hostile)}]" in expr
    assert expr.startswith('tenant_id == "acme" and (')


# The same tenants as filtering st.text() for printable characters, drawn from them: no examples thrown away.
@given(st.text(st.characters(min_codepoint=32, exclude_characters="\x7f"), min_size=1).filter(str.strip))
def test_the_access_prefix_is_fixed_whatever_the_tenant(tenant):
    expr = search_expr(Principal(tenant, ["sre"]), None, None, None)
    assert expr.startswith(f"tenant_id == {quote(tenant)} and (acl_key like ")
    assert expr.endswith('and is_current == true and chunk_type == "child"')


def test_admits_rechecks_tenant_and_groups():
    access = access_of(Principal("acme", ["sre"]), None)
    assert access.admits(ChunkRow(tenant_id="acme", access_control_list=["sre", "x"]))
    assert not access.admits(ChunkRow(tenant_id="globex", access_control_list=["sre"]))
    assert not access.admits(ChunkRow(tenant_id="acme", access_control_list=["payments"]))
    assert not access.admits(ChunkRow(tenant_id="acme", access_control_list=["sre"], is_current=False))


def test_admits_says_what_the_expression_says_of_scope_and_time():
    where = search_filter(Principal("acme", ["sre"]), 100, "runbook", {"tags": ["db"], "severity": "sev1"})
    row = ChunkRow(
        tenant_id="acme",
        access_control_list=["sre"],
        is_current=False,
        temporal_start=50,
        temporal_end=150,
        doc_tag="runbook",
        tags=["db", "x"],
        severity="sev1",
    )
    assert where.admits(row)
    assert not where.admits(ChunkRow(**{**row.to_row(), "temporal_end": 100}))  # ended at as_of: not valid then
    assert not where.admits(ChunkRow(**{**row.to_row(), "doc_tag": "other"}))
    assert not where.admits(ChunkRow(**{**row.to_row(), "tags": ["x"]}))
    assert not where.admits(ChunkRow(**{**row.to_row(), "severity": "sev2"}))
    assert not where.admits(ChunkRow(**{**row.to_row(), "chunk_type": "full_text"}))


def test_a_literal_milvus_cannot_take_is_the_callers_error():
    with pytest.raises(FilterError, match="doc_tag: .* NUL character"):
        search_filter(Principal("acme", ["sre"]), None, "tag\x00", None)


def test_as_of_takes_what_the_cli_takes_and_dates_and_datetimes():
    from datetime import UTC, date, datetime, timedelta, timezone

    from cairn.query.filters import as_epoch

    day = 1_767_225_600  # 2026-01-01T00:00:00Z
    assert as_epoch(None) is None and as_epoch(day) == day
    assert as_epoch("2026-01-01") == as_epoch("2026-01-01T00:00Z") == as_epoch(date(2026, 1, 1)) == day
    assert as_epoch(datetime(2026, 1, 1)) == as_epoch(datetime(2026, 1, 1, tzinfo=UTC)) == day  # naive: UTC
    assert as_epoch(datetime(2026, 1, 1, 1, tzinfo=timezone(timedelta(hours=1)))) == day
    with pytest.raises(FilterError, match="as_of: 'yesterday' is not an ISO date"):
        as_epoch("yesterday")
    for wrong in (True, 1.5, [day]):
        with pytest.raises(FilterError, match="as_of must be epoch seconds, an ISO date, a date or a datetime"):
            as_epoch(wrong)


def test_as_of_outside_the_years_1_to_9999_is_the_callers_error():
    """Issue #51: -2**63 and year 1 east of UTC (which is year 0 in UTC) passed the edge, then failed deep inside
    as a 500 (`from_epoch` overflowed)."""
    from datetime import datetime, timedelta, timezone

    from cairn.query.filters import as_epoch

    for wrong in (-(2**63), 2**62, "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"):
        with pytest.raises(FilterError, match="outside the years 1 to 9999"):
            as_epoch(wrong)
    with pytest.raises(FilterError, match="outside the years 1 to 9999"):
        as_epoch(datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=14))))
    assert as_epoch("0001-01-01") == -62135596800 and as_epoch("9999-12-31T23:59:59Z") == 253402300799
    with pytest.raises(FilterError, match=r"as_of: '2026-01-01x+\.\.\. is not an ISO date"):
        as_epoch("2026-01-01" + "x" * 10_000)  # quoted short, never whole


@pytest.mark.parametrize(
    "filters, reason",
    [
        ({"service_name": "ledger\ud800"}, r"filter 'service_name': 'ledger\\ud800' holds '\\ud800' at character 6"),
        ({"tags": ["db", "\udcff"]}, r"filter 'tags': .* lone surrogate"),
        ({"service_name": "a\x00b"}, r"filter 'service_name': 'a\\x00b' holds a NUL character"),
        ({"severity": "sev1\x1b[2J"}, r"filter 'severity': .* holds a control character"),
        ({"service_name": "x" * 257}, r"filter 'service_name': 257 bytes, longer than the index holds \(256 bytes\)"),
        ({"tags": ["é" * 257]}, r"filter 'tags': 514 bytes, longer than the index holds \(512 bytes\)"),
        ({"tags": [str(n) for n in range(101)]}, r"filter 'tags': 101 values, more than 100"),
    ],
)
def test_a_filter_value_the_engine_cannot_take_is_refused_naming_it(filters, reason):
    """Issue #51: a lone surrogate in a filter value (valid JSON) reached the index client, failed there, and the
    service answered 503 'index unavailable' and reopened its Retriever."""
    with pytest.raises(FilterError, match=reason) as refused:
        search_expr(Principal("acme", ["sre"]), None, None, filters)
    assert "\n" not in str(refused.value) and len(str(refused.value)) < 300


def test_a_doc_tag_and_a_question_are_checked_as_the_engine_needs_them():
    from cairn.query.filters import check_question

    principal = Principal("acme", ["sre"])
    for doc_tag, reason in (("\ud83d", "lone surrogate"), ("a\x00", "NUL"), ("t" * 257, "257 bytes")):
        with pytest.raises(FilterError, match=f"doc_tag: .*{reason}"):
            search_expr(principal, None, doc_tag, None)
    assert 'doc_tag == "msa-2024 😀"' in search_expr(principal, None, "msa-2024 😀", None)  # non-BMP is text
    assert check_question("ledger failover 😀\n\tand more") == "ledger failover 😀\n\tand more"
    for text, reason in (("ledger \udc80", "lone surrogate"), ("ledger\x00", "NUL"), ("x" * 65536, "65536 bytes")):
        with pytest.raises(FilterError, match=f"query: .*{reason}"):
            check_question(text)
    with pytest.raises(FilterError, match="the question must be a string"):
        check_question(b"ledger")  # type: ignore[arg-type]
