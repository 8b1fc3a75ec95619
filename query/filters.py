"""A question's filter, checked: tenant + ACL + time + scope as a RowFilter (schemas/row_filter.py), which renders
the Milvus expression (every literal escaped) and checks a row the same way.

Milvus Lite has no filter templates, so caller input reaches the expression only through
`schemas.collection.quote` / `in_list`; field names come from the allow-list below, never from the caller.

Every string a caller hands a question (the text, a doc_tag, a filter value) is checked here as the engine will
need it, before any work: text that UTF-8 can encode (a lone surrogate is valid JSON and a valid Python str, and
fails inside the index client as if the index were down), no NUL (and in a literal no other control character
the expression parser cannot take), no longer than the field it is compared with holds. `as_of` falls in the
years 1 to 9999. A failing value is a FilterError (a UsageError: HTTP 400, exit 2) of one line naming it.
"""

from __future__ import annotations

from datetime import date, datetime

from cairn.errors import FilterError
from cairn.schemas import ChunkType, Principal
from cairn.schemas.fields import ARRAY_ITEM_LENGTH, MAX_TEXT, VARCHAR_FIELDS
from cairn.schemas.records import EPOCH_FIRST, TEMPORAL_OPEN, in_years, parse_day, to_epoch
from cairn.schemas.row_filter import METADATA_FIELDS, RowFilter

# Metadata a caller may narrow by: field -> whether the row field is an array (tags) or a scalar.
FILTER_FIELDS = METADATA_FIELDS
# What a caller narrows by: a FILTER_FIELDS name -> a value, or a list of values any of which matches.
Filters = dict[str, str | list[str]]
INT64 = (-(2**63), 2**63 - 1)
MAX_FILTER_VALUES = 100  # values one filter field may list (any of them matches)
SHOWN_CHARS = 60  # a caller's value, quoted in an error, is cut to this


AsOf = int | str | date | datetime | None  # what retrieve() takes as as_of; as_epoch() makes it epoch seconds


def as_epoch(as_of: AsOf) -> int | None:
    """`as_of` as epoch seconds: an int is taken as is; an ISO date or date-time string (what `cairn query --as-of`
    takes), a datetime (naive: UTC) or a date (its midnight, UTC) converted; anything else a FilterError."""
    if as_of is None:
        return None
    if isinstance(as_of, int) and not isinstance(as_of, bool):
        epoch: int | None = as_of
    elif isinstance(as_of, datetime):
        epoch = to_epoch(as_of)
    elif isinstance(as_of, date):
        epoch = to_epoch(datetime(as_of.year, as_of.month, as_of.day))
    elif isinstance(as_of, str):
        if len(as_of) > 64:  # parse_day's error would quote all of it
            raise FilterError(f"as_of: {shown(as_of)} is not an ISO date (YYYY-MM-DD or YYYY-MM-DDTHH:MM)")
        try:
            return parse_day(as_of)
        except ValueError as exc:
            raise FilterError(f"as_of: {exc}") from None
    else:
        raise FilterError(f"as_of must be epoch seconds, an ISO date, a date or a datetime; got {shown(as_of)}")
    if epoch is None or not in_years(epoch):  # an aware datetime of year 1 east of UTC is in year 0
        raise FilterError(
            f"as_of {shown(as_of)} is outside the years 1 to 9999: epoch seconds {EPOCH_FIRST} to {TEMPORAL_OPEN}"
        )
    return epoch


def shown(value: object) -> str:
    """A caller's value as an error quotes it: its repr (every control character and surrogate escaped), cut."""
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def check_text(name: str, value: str, max_bytes: int, literal: bool = False) -> str:
    """`value` as the engine needs it, else a FilterError naming `name`: encodable as UTF-8 (no lone surrogate),
    no NUL, at most `max_bytes` bytes; a `literal` (compared inside a filter expression) also holds no control
    character but tab, newline and carriage return, which the expression parser cannot read."""
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise FilterError(
            f"{name}: {shown(value)} holds {shown(value[exc.start : exc.end])} at character {exc.start}, "
            "which is not text (a lone surrogate): send UTF-8"
        ) from None
    if "\x00" in value:
        raise FilterError(f"{name}: {shown(value)} holds a NUL character (\\x00), which the index cannot take")
    if literal and any((ord(c) < 32 or ord(c) == 127) and c not in "\t\n\r" for c in value):
        raise FilterError(f"{name}: {shown(value)} holds a control character, which no stored value has")
    if size > max_bytes:
        raise FilterError(f"{name}: {size} bytes, longer than the index holds ({max_bytes} bytes): {shown(value)}")
    return value


def check_question(text: str) -> str:
    """The question's text as the engine needs it (str, UTF-8, no NUL, at most the index's text size)."""
    if not isinstance(text, str):
        raise FilterError(f"the question must be a string, got {type(text).__name__}")
    return check_text("query", text, MAX_TEXT)


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
            raise FilterError(f"filter {key!r} needs a string or a non-empty list of strings, got {shown(value)}")
        if len(values) > MAX_FILTER_VALUES:
            raise FilterError(f"filter {key!r}: {len(values)} values, more than {MAX_FILTER_VALUES}")
        size = ARRAY_ITEM_LENGTH if FILTER_FIELDS[key] else VARCHAR_FIELDS[key]
        for one in values:
            check_text(f"filter {key!r}", one, size, literal=True)
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
    if doc_tag and not isinstance(doc_tag, str):
        raise FilterError(f"doc_tag must be a string, got {type(doc_tag).__name__}")
    if doc_tag:
        check_text("doc_tag", doc_tag, VARCHAR_FIELDS["doc_tag"], literal=True)
    where = access_of(principal, as_of).narrowed(
        chunk_type=ChunkType.CHILD.value, doc_tag=doc_tag or None, metadata=checked_metadata(filters)
    )
    try:
        where.expr  # noqa: B018 - rendered once now: a literal Milvus cannot take fails here, as the caller's error
    except (TypeError, ValueError) as exc:
        raise FilterError(str(exc)) from None
    return where
