"""The one Milvus collection, derived from the records: fields, indexes, and the filter grammar.

Parents (chunk_type "full_text") and children ("child") share the collection. Children are what
similarity search hits; a child's parent_chunk_id names the parent row fetched for context.

ACL filtering: Milvus Lite evaluates ARRAY_CONTAINS_ANY row by row in Python (seconds at 100k rows),
while a LIKE on a VARCHAR is cheap. Each row therefore also carries `acl_key`, its groups hex-encoded
between bars ("|737265|..."). Hex has no LIKE wildcard, quote or bar, so a hostile group name can
never widen the match; access_control_list keeps the plain list the schema names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from pymilvus import CollectionSchema, DataType, Function, FunctionType, MilvusClient
from pymilvus.milvus_client import IndexParams

from cairn.schemas.fields import ARRAY_FIELDS, ARRAY_ITEM_LENGTH, MAX_TEXT, VARCHAR_FIELDS, acl_token
from cairn.schemas.fields import acl_key as acl_key  # offered here too, beside the filters that match it

INT_FIELDS = (
    "token_count",
    "section_level",
    "section_order",
    "chunk_order",
    "temporal_start",
    "temporal_end",
    "created_at",
    "updated_at",
)
BOOL_FIELDS = ("is_current",)  # False for superseded versions kept as history
JSON_FIELDS = ("quality_flags", "extra")
DENSE_FIELDS = ("abstract_embedding", "full_text_embedding")
SPARSE_FIELD = "text_sparse"
BM25_INPUT = "search_text"  # title + breadcrumbs + text: what BM25 ranks (text alone lacks the heading words)
_ANALYZER_WORD = re.compile(r"\w+")  # the BM25 function's default analyzer: lower-cased word tokens


def analyzed(text: str) -> list[str]:
    """The words the engine's BM25 analyzer makes of `text`, in order (what the in-memory store ranks and what a
    keyword match must share with the question)."""
    return _ANALYZER_WORD.findall(text.lower())


# Everything a reader may ask for; vectors are never returned to callers.
OUTPUT_FIELDS = (
    ["chunk_id", "text", *[f for f in VARCHAR_FIELDS if f not in ("chunk_id", "acl_key")]]
    + list(INT_FIELDS)
    + list(BOOL_FIELDS)
    + list(ARRAY_FIELDS)
    + list(JSON_FIELDS)
)

# What a search leg reads of each child row it finds (query/search.py builds its candidates from them).
SEARCH_FIELDS = [
    "parent_chunk_id",
    "document_id",
    "section_id",
    "section_order",
    "title",
    "breadcrumbs",
    "text",
    "token_count",
    "version_hash",
    "updated_at",
    "temporal_start",
    "service_name",
]


# A collection property naming the encoder (model and backend, embedding.Encoder.identity) whose vectors
# fill it: queries and later ingests must embed with the same one.
EMBEDDER_PROPERTY = "cairn.embedder"


def embedder_mismatch(collection: str, have: str | None, want: str) -> str | None:
    """Why a collection filled by encoder `have` cannot be used with encoder `want`, or None if it can."""
    if have is None or have == want:
        return None
    return (
        f"collection {collection!r} holds vectors from the encoder {have!r}, but the config embeds with {want!r}: "
        "they are not comparable. Set [embedding] back, or ingest into a new [milvus] collection"
    )


def schema_mismatch(collection: str, described: dict[str, Any], dim: int) -> str | None:
    """Why a collection (as `describe_collection` gives it) cannot hold this Cairn's rows of `dim`-wide vectors,
    or None if it can: a field it lacks, a dense vector of another width."""
    have = {f["name"]: f for f in described["fields"]}
    missing = sorted({f.name for f in build_schema(dim).fields} - set(have))
    wrong_dim = [
        name for name in DENSE_FIELDS if name in have and int(have[name].get("params", {}).get("dim", dim)) != dim
    ]
    if not (missing or wrong_dim):
        return None
    return (
        f"collection {collection!r} was built by another Cairn version (missing fields: {missing or 'none'}; "
        f"wrong vector size: {wrong_dim or 'none'})"
    )


def build_schema(dim: int) -> CollectionSchema:
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("chunk_id", DataType.VARCHAR, is_primary=True, max_length=VARCHAR_FIELDS["chunk_id"])
    for name, length in VARCHAR_FIELDS.items():
        if name == "chunk_id":
            continue
        schema.add_field(name, DataType.VARCHAR, max_length=length, is_partition_key=(name == "tenant_id"))
    for name in INT_FIELDS:
        schema.add_field(name, DataType.INT64)
    for name in BOOL_FIELDS:
        schema.add_field(name, DataType.BOOL)
    for name, capacity in ARRAY_FIELDS.items():
        schema.add_field(
            name, DataType.ARRAY, element_type=DataType.VARCHAR, max_capacity=capacity, max_length=ARRAY_ITEM_LENGTH
        )
    for name in JSON_FIELDS:
        schema.add_field(name, DataType.JSON)
    schema.add_field("text", DataType.VARCHAR, max_length=MAX_TEXT)
    schema.add_field(BM25_INPUT, DataType.VARCHAR, max_length=MAX_TEXT, enable_analyzer=True)
    for name in DENSE_FIELDS:
        schema.add_field(name, DataType.FLOAT_VECTOR, dim=dim)
    schema.add_field(SPARSE_FIELD, DataType.SPARSE_FLOAT_VECTOR)
    schema.add_function(
        Function(
            name="bm25",
            function_type=FunctionType.BM25,
            input_field_names=[BM25_INPUT],
            output_field_names=[SPARSE_FIELD],
        )
    )
    return schema


def build_index_params(hnsw_m: int = 16, hnsw_ef_construction: int = 200) -> IndexParams:
    params = MilvusClient.prepare_index_params()
    for name in DENSE_FIELDS:
        params.add_index(
            field_name=name,
            index_type="HNSW",
            metric_type="COSINE",
            params={"M": hnsw_m, "efConstruction": hnsw_ef_construction},
        )
    params.add_index(field_name=SPARSE_FIELD, index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    for name in ("document_id", "chunk_type", "source_name"):
        params.add_index(field_name=name, index_type="INVERTED")
    return params


# ---- filter expressions ------------------------------------------------------------------------
# Milvus Lite has no filter templates, so every literal is escaped here and nowhere else.

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def quote(value: str) -> str:
    """A Milvus string literal for any input: backslash, quote and \\n \\t \\r escaped.

    Milvus's expression parser knows no \\u escape, so other control characters are refused.
    """
    if not isinstance(value, str):
        raise TypeError(f"filter literal must be a string, got {type(value).__name__}: {value!r}")
    bad = [c for c in value if (ord(c) < 32 or ord(c) == 127) and c not in _ESCAPES]
    if bad:
        raise ValueError(f"filter literal {value!r} contains control characters")
    return '"' + "".join(_ESCAPES.get(c, c) for c in value) + '"'


def access_filter(tenant: str, groups: tuple[str, ...] | list[str]) -> str:
    """Tenant + ACL pre-filter: the row's tenant equals the caller's and shares at least one group."""
    if not groups:
        raise ValueError("access_filter needs at least one group")
    any_group = " or ".join(f'acl_key like "%|{acl_token(g)}|%"' for g in sorted(set(groups)))
    return f"tenant_id == {quote(tenant)} and ({any_group})"


def in_list(field: str, values: Iterable[str]) -> str:
    return f"{field} in [{', '.join(quote(v) for v in values)}]"
