"""A question's filter, checked: tenant + ACL + time + scope as a RowFilter (schemas/row_filter.py), which renders
the Milvus expression (every literal escaped) and checks a row the same way.

Milvus Lite has no filter templates, so caller input reaches the expression only through
`schemas.collection.quote` / `in_list`; field names come from the allow-list below, never from the caller.
"""

from __future__ import annotations

from datetime import date, datetime

from cairn.errors import FilterError
from cairn.schemas import ChunkType, Principal
from cairn.schemas.records import parse_day, to_epoch
from cairn.schemas.row_filter import METADATA_FIELDS, RowFilter

# Metadata a caller may narrow by: field -> whether the row field is an array (tags) or a scalar.
FILTER_FIELDS = METADATA_FIELDS
# What a caller narrows by: a FILTER_FIELDS name -> a value, or a list of values any of which matches.
Filters = dict[str, str | list[str]]
INT64 = (-(2**63), 2**63 - 1)


AsOf = int | str | date | datetime | None  # what retrieve() takes as as_of; as_epoch() makes it epoch seconds


def as_epoch(as_of: AsOf) -> int | None:
    """`as_of` as epoch seconds: an int is taken as is; an ISO date or date-time string (what `cairn query --as-of`
    takes), a datetime (naive: UTC) or a date (its midnight, UTC) converted; anything else a FilterError."""
    if as_of is None or (isinstance(as_of, int) and not isinstance(as_of, bool)):
        return as_of
    if isinstance(as_of, datetime):
        return to_epoch(as_of)
    if isinstance(as_of, date):
        return to_epoch(datetime(as_of.year, as_of.month, as_of.day))
    if isinstance(as_of, str):
        try:
            return parse_day(as_of)
        except ValueError as exc:
            raise FilterError(f"as_of: {exc}") from None
    raise FilterError(f"as_of must be epoch seconds, an ISO date, a date or a datetime; got {as_of!r}")


def checked_as_of(as_of: int | None) -> int | None:
    """`as_of` as epoch seconds Milvus can compare (the temporal fields are Int64), or a FilterError."""
    if as_of is None:
        return None
    if isinstance(as_of, bool) or not isinstance(as_of, int):
        raise FilterError(f"as_of must be epoch seconds (int), got {as_of!r}")
    if not INT64[0] <= as_of <= INT64[1]:
        raise FilterError(f"as_of {as_of} is out of range: epoch seconds between {INT64[0]} and {INT64[1]}")
    return as_of


def checked_metadata(filters: Filters | None) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """`{"service_name": "ledger", "tags": ["db", "failover"]}` -> ((field, values), ...) sorted by field, each
    field from FILTER_FIELDS and each value a string; a list means any of its values (tags: rows carrying any)."""
    if not filters:
        return ()
    if not isinstance(filters, dict):
        raise FilterError(f"filters must be a dict of field -> value(s), got {type(filters).__name__}")
    strange = [k for k in filters if not isinstance(k, str)]
    if strange:
        raise FilterError(
            f"filter fields are names (str), got {strange[0]!r}; allowed: {', '.join(sorted(FILTER_FIELDS))}"
        )
    checked: list[tuple[str, tuple[str, ...]]] = []
    for key in sorted(filters):
        if key not in FILTER_FIELDS:
            raise FilterError(f"unknown filter field {key!r}; allowed: {', '.join(sorted(FILTER_FIELDS))}")
        value = filters[key]
        values = [value] if isinstance(value, str) else value
        if not isinstance(values, (list, tuple)) or not values or not all(isinstance(v, str) for v in values):
            raise FilterError(f"filter {key!r} needs a string or a non-empty list of strings, got {value!r}")
        checked.append((key, tuple(values)))
    return tuple(checked)


def access_of(principal: Principal, as_of: int | None) -> RowFilter:
    """What any row returned to this principal must satisfy (parents and children alike)."""
    if not isinstance(principal, Principal):
        raise TypeError("retrieve() needs a Principal(tenant, groups)")
    return RowFilter.access(principal.tenant, principal.groups, checked_as_of(as_of))


def search_filter(principal: Principal, as_of: int | None, doc_tag: str | None, filters: Filters | None) -> RowFilter:
    """The pre-filter of every search leg: child rows this principal may read, in scope. Every argument is checked
    here, and every literal escaped when the filter is rendered (RowFilter.expr), before any work."""
    where = access_of(principal, as_of).narrowed(
        chunk_type=ChunkType.CHILD.value, doc_tag=doc_tag or None, metadata=checked_metadata(filters)
    )
    try:
        where.expr  # noqa: B018 - rendered once now: a literal Milvus cannot take fails here, as the caller's error
    except (TypeError, ValueError) as exc:
        raise FilterError(str(exc)) from None
    return where
