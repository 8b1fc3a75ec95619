import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn.schemas.collection import access_filter, acl_key, acl_token, quote


def test_quote_escapes_quotes_and_backslashes():
    assert quote('a"b\\c') == '"a\\"b\\\\c"'
    assert quote("line\nbreak") == '"line\\nbreak"'


def test_quote_refuses_control_characters_and_non_strings():
    with pytest.raises(ValueError, match="control characters"):
        quote("a\x00b")
    with pytest.raises(TypeError):
        quote(3)


@given(st.lists(st.text(min_size=1), min_size=1, max_size=5))
def test_acl_key_holds_only_hex_and_bars(groups):
    key = acl_key(groups)
    assert set(key) <= set("0123456789abcdef|")
    for group in groups:
        assert f"|{acl_token(group)}|" in key


@given(st.text(min_size=1).filter(lambda s: all((ord(c) >= 32 and ord(c) != 127) or c in "\n\t\r" for c in s)))
def test_access_filter_keeps_hostile_tenant_inside_one_literal(tenant):
    expr = access_filter(tenant, ["sre"])
    literal = quote(tenant)
    assert expr.startswith(f"tenant_id == {literal} and (")
    # the only unescaped quotes are the literal's own delimiters and the LIKE patterns'
    assert expr.count('acl_key like "%|') == 1


def test_access_filter_needs_a_group():
    with pytest.raises(ValueError):
        access_filter("acme", [])
