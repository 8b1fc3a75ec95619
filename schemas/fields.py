"""What fits in a row of the collection: field sizes in bytes and the ACL's filterable encoding. Without pymilvus,
so the configuration can check identifiers against the same limits the collection enforces (one source of
truth: schemas/collection.py builds the schema from these)."""

from __future__ import annotations

from typing import Any

# A row of the collection as pymilvus writes and reads it: field name -> value (the fields below, the vectors,
# the JSON `extra` and `quality_flags`); a read carries the fields it asked for.
Row = dict[str, Any]

# Lengths are bytes for VARCHAR; Milvus rejects longer values. Identifiers are never clipped to fit: a value
# over its size is refused (configuration) or fails its document (row building).
MAX_TEXT = 65535
VARCHAR_FIELDS = {
    "chunk_id": 64,
    "document_id": 64,
    "section_id": 512,
    "parent_section_id": 512,
    "parent_chunk_id": 64,
    "chunk_type": 16,
    "content_type": 32,
    "source_type": 16,
    "source_name": 128,
    "service_name": 256,
    "environment": 32,
    "tenant_id": 256,
    "acl_key": 8192,
    "version_hash": 128,
    "severity": 16,
    "title": 1024,
    "source_uri": 2048,
    "doc_tag": 256,
    "locator": 2048,
}
ARRAY_FIELDS = {"breadcrumbs": 32, "access_control_list": 64, "tags": 64}
ARRAY_ITEM_LENGTH = 512


def acl_token(group: str) -> str:
    return group.encode("utf-8").hex()


def acl_key(groups: list[str]) -> str:
    return "|" + "|".join(acl_token(g) for g in sorted(set(groups))) + "|"
