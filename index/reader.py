"""The reading half of the collection on Milvus: `CollectionReader`, the reads of one collection, one Milvus call
each whatever the number of ids (dense and BM25 search, rows by primary key, children per document, neighbouring
sections, paged scans, counts), every row returned as a ChunkRow. It meets index/protocol.py IndexReader; the
writer (index/store.py) reads through one too. Imports nothing of Cairn's ingestion: `cairn.query` builds on it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from pymilvus import MilvusClient

from cairn.closing import Closing
from cairn.index.milvus import Connection, quiet_lite_refusals
from cairn.schemas import ChunkType
from cairn.schemas.collection import OUTPUT_FIELDS, SEARCH_FIELDS, SPARSE_FIELD, quote
from cairn.schemas.config import MilvusConfig
from cairn.schemas.row_filter import RowFilter
from cairn.schemas.rows import ChunkRow, ScoredRow


class CollectionReader(Closing):
    """The reads of one collection, one Milvus call each, whatever the number of ids: dense and BM25 search,
    rows by primary key, children per document, neighbouring sections, paged scans and counts. Every query-side
    call takes the caller's access filter (tenant + ACL + time) and applies it inside Milvus. Read-only: the
    writer (index/store.py) reads through one of these. Open one on the serving generation with
    `cairn.index.generations.open_serving`."""

    def __init__(self, connection: Connection, config: MilvusConfig) -> None:
        self.connection = connection
        self.config = config
        self.collection = config.collection

    @property
    def client(self) -> MilvusClient:
        return self.connection.client

    def search_dense(
        self, field: str, vectors: list[list[float]], where: RowFilter, limit: int
    ) -> list[list[ScoredRow]]:
        """Nearest child rows to each vector on a dense field that pass `where`, per vector, best first (the score:
        the cosine)."""
        hits: list[list[dict[str, Any]]] = self.client.search(
            self.collection,
            data=vectors,
            anns_field=field,
            limit=limit,
            filter=where.expr,
            output_fields=SEARCH_FIELDS,
            search_params={"params": {"ef": max(64, limit * 2)}},
        )
        return [
            [ScoredRow(ChunkRow.from_row(hit), float(hit["distance"])) for hit in per_vector] for per_vector in hits
        ]

    def search_bm25(self, text: str, where: RowFilter, limit: int, fields: list[str] | None = None) -> list[ScoredRow]:
        """Best BM25 matches of the text that pass `where`, best first, the score positive (Milvus Lite reports it
        negated), each row with `fields` (None: SEARCH_FIELDS). Milvus Lite reads every field of a hit whatever is
        asked; what is not asked for is neither encoded nor sent, and a field asked for here is a read saved later
        (the BM25 leg asks for the full-text vector: query/search.py)."""
        hits: list[list[dict[str, Any]]] = self.client.search(
            self.collection,
            data=[text],
            anns_field=SPARSE_FIELD,
            limit=limit,
            filter=where.expr,
            output_fields=SEARCH_FIELDS if fields is None else fields,
        )
        return [ScoredRow(ChunkRow.from_row(hit), abs(float(hit["distance"]))) for hit in hits[0]]

    def rows(self, chunk_ids: list[str], fields: list[str] = OUTPUT_FIELDS) -> list[ChunkRow]:
        """Rows by primary key: a point read, where any filter would scan every row (Milvus Lite)."""
        if not chunk_ids:
            return []
        found = self.client.get(self.collection, ids=list(dict.fromkeys(chunk_ids)), output_fields=fields)
        return [ChunkRow.from_row(row) for row in found]

    def any_row(self, where: RowFilter) -> bool:
        """Whether any row passes `where` (one row asked for; on Milvus Lite still a scan: for rare calls only)."""
        return bool(self.client.query(self.collection, filter=where.expr, output_fields=["chunk_id"], limit=1))

    def count(self, where: RowFilter) -> int:
        """How many rows pass `where` (one count query)."""
        found = self.client.query(self.collection, filter=where.expr, output_fields=["count(*)"])
        return int(found[0]["count(*)"]) if found else 0

    def sample(self, where: RowFilter, limit: int, fields: list[str] = OUTPUT_FIELDS) -> list[ChunkRow]:
        """At most `limit` rows that pass `where`."""
        found = self.client.query(self.collection, filter=where.expr, output_fields=fields, limit=limit)
        return [ChunkRow.from_row(row) for row in found]

    def children_per_document(self, document_ids: set[str], where: RowFilter) -> dict[str, int]:
        """How many child rows each document has that `where` lets through."""
        if not document_ids:
            return {}
        narrowed = where.narrowed(chunk_type=ChunkType.CHILD.value, documents=tuple(sorted(document_ids)))
        rows = self.client.query(self.collection, filter=narrowed.expr, output_fields=["document_id"])
        counts: dict[str, int] = {}
        for row in rows:
            counts[row["document_id"]] = counts.get(row["document_id"], 0) + 1
        return counts

    def neighbours(self, seeds: list[ChunkRow], where: RowFilter) -> list[ChunkRow]:
        """The parent sections just before and after each seed section (same document and version) that pass
        `where`."""
        if not seeds:
            return []
        clauses = [
            f"(document_id == {quote(r.document_id)} and version_hash == {quote(r.version_hash)} and "
            f"section_order in [{int(r.section_order) - 1}, {int(r.section_order) + 1}])"
            for r in seeds
        ]
        parents = where.narrowed(chunk_type=ChunkType.FULL_TEXT.value)
        found = self.client.query(
            self.collection, filter=f"{parents.expr} and ({' or '.join(clauses)})", output_fields=OUTPUT_FIELDS
        )
        return [ChunkRow.from_row(row) for row in found]

    def iterate(self, filter: str, fields: list[str], batch_size: int = 1000) -> Iterator[ChunkRow]:
        """Every matching row, paged (a plain query is capped at 16,384 rows on a server)."""
        with quiet_lite_refusals():
            iterator = self.client.query_iterator(
                self.collection, batch_size=batch_size, filter=filter, output_fields=fields
            )
            try:
                while page := iterator.next():
                    for row in page:
                        yield ChunkRow.from_row(row)
            finally:
                iterator.close()

    def tenants_and_groups(self, tenant: str | None = None) -> tuple[set[str], set[str]]:
        """The tenants on the collection's parent rows (or just `tenant`), and every group of their ACLs."""
        where = f"chunk_type == {quote(ChunkType.FULL_TEXT.value)}" + (
            f" and tenant_id == {quote(tenant)}" if tenant else ""
        )
        tenants: set[str] = set()
        groups: set[str] = set()
        for row in self.iterate(where, ["tenant_id", "access_control_list"]):
            tenants.add(row.tenant_id)
            groups.update(row.access_control_list)
        return tenants, groups

    def counts(self) -> Counter[tuple[str, str, str]]:
        """Rows per (tenant, source, chunk_type)."""
        counter: Counter[tuple[str, str, str]] = Counter()
        for row in self.iterate("", ["tenant_id", "source_name", "chunk_type"]):
            counter[(row.tenant_id, row.source_name, row.chunk_type)] += 1
        return counter

    def close(self) -> None:
        """Close the connection (shared with whatever else reads or writes through it)."""
        self.connection.close()
