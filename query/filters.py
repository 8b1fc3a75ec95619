"""The Milvus filter expression of a query: tenant + ACL + time + scope, every literal escaped; and the checks
that keep a caller's bad value the caller's error.

Milvus Lite has no filter templates, so caller input reaches the expression only through
`schemas.collection.quote` / `in_list`; field names come from the allow-list below, never from the caller.

Every string a caller hands a question (the text, a doc_tag, a filter value) is checked here as the engine will
need it, before any work: text that UTF-8 can encode (a lone surrogate is valid JSON and a valid Python str, and
fails inside the index client as if the index were down), no NUL (and in a literal no other control character
the expression parser cannot take), no longer than the field it is compared with holds. `as_of` falls in the
years 1 to 9999. A failing value is a FilterError (a UsageError: HTTP 400, exit 2) of one line naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from cairn.errors import FilterError
from cairn.query.types import Row
from cairn.schemas import ChunkType, Principal
from cairn.schemas.collection import access_filter, in_list, quote
from cairn.schemas.fields import ARRAY_ITEM_LENGTH, MAX_TEXT, VARCHAR_FIELDS
from cairn.schemas.records import EPOCH_FIRST, TEMPORAL_OPEN, in_years, parse_day, to_epoch

# Metadata a caller may narrow by: field -> whether the row field is an array (tags) or a scalar.
FILTER_FIELDS = {
    "service_name": False,
    "environment": False,
    "severity": False,
    "content_type": False,
    "source_type": False,
    "source_name": False,
    "tags": True,
}
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


def time_filter(as_of: int | None) -> str:
    """Current rows by default; with as_of (epoch seconds) the rows valid then, history included."""
    if as_of is None:
        return "is_current == true"
    if isinstance(as_of, bool) or not isinstance(as_of, int):
        raise FilterError(f"as_of must be epoch seconds (int), got {as_of!r}")
    if not INT64[0] <= as_of <= INT64[1]:  # the temporal fields are Int64: Milvus would refuse the expression
        raise FilterError(f"as_of {as_of} is out of range: epoch seconds between {INT64[0]} and {INT64[1]}")
    return f"temporal_start <= {as_of} and temporal_end > {as_of}"


def metadata_filter(filters: Filters | None) -> str:
    """`{"service_name": "ledger", "tags": ["db", "failover"]}` -> an AND of escaped conditions.
    A list means any of its values; tags match rows carrying any of them."""
    if not filters:
        return ""
    if not isinstance(filters, dict):
        raise FilterError(f"filters must be a dict of field -> value(s), got {type(filters).__name__}")
    strange = [k for k in filters if not isinstance(k, str)]
    if strange:
        raise FilterError(
            f"filter fields are names (str), got {strange[0]!r}; allowed: {', '.join(sorted(FILTER_FIELDS))}"
        )
    parts: list[str] = []
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
        if FILTER_FIELDS[key]:
            parts.append(f"ARRAY_CONTAINS_ANY({key}, [{', '.join(quote(v) for v in values)}])")
        else:
            parts.append(in_list(key, values))
    return " and ".join(parts)


def access_expr(principal: Principal, as_of: int | None) -> str:
    """What any row returned to this principal must satisfy (parents and children alike)."""
    if not isinstance(principal, Principal):
        raise TypeError("retrieve() needs a Principal(tenant, groups)")
    return f"{access_filter(principal.tenant, principal.groups)} and {time_filter(as_of)}"


def search_expr(principal: Principal, as_of: int | None, doc_tag: str | None, filters: Filters | None) -> str:
    """The pre-filter of every search leg: child rows this principal may read, in scope."""
    parts = [access_expr(principal, as_of), f"chunk_type == {quote(ChunkType.CHILD.value)}"]
    if doc_tag:
        if not isinstance(doc_tag, str):
            raise FilterError(f"doc_tag must be a string, got {type(doc_tag).__name__}")
        parts.append(f"doc_tag == {quote(check_text('doc_tag', doc_tag, VARCHAR_FIELDS['doc_tag'], literal=True))}")
    extra = metadata_filter(filters)
    if extra:
        parts.append(extra)
    return " and ".join(parts)


def readable(row: Row, principal: Principal) -> bool:
    """The ACL re-check on what is about to leave: same tenant, one shared group."""
    return row.get("tenant_id") == principal.tenant and bool(
        set(row.get("access_control_list") or []) & set(principal.groups)
    )


# What `admits` reads from a row.
ACCESS_FIELDS = ["tenant_id", "access_control_list", "is_current", "temporal_start", "temporal_end"]


@dataclass(frozen=True)
class Access:
    """Who asks, and as of when: the access filter as a Milvus expression (for searches and scans) and as a
    check of one row (for rows fetched by primary key, which need no filter scan). Both say the same thing,
    which tests/integration/test_index_milvus.py checks against Milvus's own evaluation."""

    principal: Principal
    as_of: int | None = None

    @property
    def expr(self) -> str:
        return access_expr(self.principal, self.as_of)

    def admits(self, row: Row) -> bool:
        if not readable(row, self.principal):
            return False
        if self.as_of is None:
            return row.get("is_current") is True
        return int(row["temporal_start"]) <= self.as_of < int(row["temporal_end"])
