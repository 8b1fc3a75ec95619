"""Which rows a read may return, as a typed record that says it two ways: as a Milvus filter expression (`expr`,
evaluated inside the engine for searches and scans) and as a check of one row (`admits`, for rows read by primary
key and for the in-memory reader). Both say the same thing: tests/integration/test_index_milvus.py checks `admits`
against Milvus's own evaluation of `expr`.

    RowFilter.access("acme", ("sre",))                      # what the principal may read now
    RowFilter.access("acme", ("sre",), as_of=1735689600)    # what was valid then, history included
    where.narrowed(chunk_type="child", doc_tag="runbook")   # ...and only child rows of one document family

Every literal reaches the expression through schemas/collection.py's `quote` and `in_list`; field names come from
the caller's allow-list (query/filters.py FILTER_FIELDS), never from the caller.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

from cairn.schemas.collection import access_filter, in_list, quote
from cairn.schemas.rows import ChunkRow

# Metadata a caller may narrow by: field -> whether the row field is an array (tags) or a scalar.
METADATA_FIELDS = {
    "service_name": False,
    "environment": False,
    "severity": False,
    "content_type": False,
    "source_type": False,
    "source_name": False,
    "tags": True,
}


@dataclass(frozen=True)
class RowFilter:
    """Rows of `tenant` sharing one of `groups` (no tenant: every row, for operators' scans), current or valid at
    `as_of` (epoch seconds), of one chunk type, one doc_tag, with metadata values (field -> any of these; tags:
    any shared), of some documents."""

    tenant: str | None = None
    groups: tuple[str, ...] = ()
    as_of: int | None = None
    chunk_type: str | None = None
    doc_tag: str | None = None
    metadata: tuple[tuple[str, tuple[str, ...]], ...] = ()
    documents: tuple[str, ...] | None = None

    @classmethod
    def access(cls, tenant: str, groups: tuple[str, ...] | list[str], as_of: int | None = None) -> RowFilter:
        if not groups:
            raise ValueError("a RowFilter's access needs at least one group")
        return cls(tenant=tenant, groups=tuple(sorted(set(groups))), as_of=as_of)

    def narrowed(
        self,
        *,
        chunk_type: str | None = None,
        doc_tag: str | None = None,
        metadata: tuple[tuple[str, tuple[str, ...]], ...] = (),
        documents: tuple[str, ...] | None = None,
    ) -> RowFilter:
        """This filter and the given conditions (a condition already set is replaced)."""
        return replace(
            self,
            chunk_type=chunk_type if chunk_type is not None else self.chunk_type,
            doc_tag=doc_tag if doc_tag is not None else self.doc_tag,
            metadata=metadata or self.metadata,
            documents=documents if documents is not None else self.documents,
        )

    @cached_property
    def expr(self) -> str:
        """The Milvus expression of this filter ("" for no condition), rendered once per filter: every search leg,
        and the gate's per-word counts, send the same one."""
        parts: list[str] = []
        if self.tenant is not None:
            parts.append(access_filter(self.tenant, self.groups))
            if self.as_of is None:
                parts.append("is_current == true")
            else:
                parts.append(f"temporal_start <= {int(self.as_of)} and temporal_end > {int(self.as_of)}")
        if self.chunk_type is not None:
            parts.append(f"chunk_type == {quote(self.chunk_type)}")
        if self.doc_tag:
            parts.append(f"doc_tag == {quote(self.doc_tag)}")
        for name, values in self.metadata:
            if METADATA_FIELDS[name]:
                parts.append(f"ARRAY_CONTAINS_ANY({name}, [{', '.join(quote(v) for v in values)}])")
            else:
                parts.append(in_list(name, values))
        if self.documents is not None:
            parts.append(in_list("document_id", sorted(self.documents)))
        return " and ".join(parts)

    def admits(self, row: ChunkRow) -> bool:
        """Whether `row` passes this filter (the ACL re-check on what is about to leave, and the in-memory reader's
        evaluation)."""
        if self.tenant is not None:
            if row.tenant_id != self.tenant or not set(row.access_control_list) & set(self.groups):
                return False
            if self.as_of is None:
                if row.is_current is not True:
                    return False
            elif not int(row.temporal_start) <= self.as_of < int(row.temporal_end):
                return False
        if self.chunk_type is not None and row.chunk_type != self.chunk_type:
            return False
        if self.doc_tag and row.doc_tag != self.doc_tag:
            return False
        for name, values in self.metadata:
            have = getattr(row, name)
            if METADATA_FIELDS[name]:
                if not set(have) & set(values):
                    return False
            elif have not in values:
                return False
        return self.documents is None or row.document_id in self.documents


# What `admits` reads of a row for the access check (a read by primary key asks for at least these).
ACCESS_FIELDS = ["tenant_id", "access_control_list", "is_current", "temporal_start", "temporal_end"]
