"""index.milvus: the access layer's reads against a real Milvus Lite collection, the caller's access filter
applied inside Milvus on every look-up."""

from __future__ import annotations

import time

import pytest

from cairn.errors import RetrievalError, StoreError
from cairn.flows.ingest import ingest_flow
from cairn.index.generations import open_serving
from cairn.index.milvus import check_encoder
from cairn.index.reader import CollectionReader
from cairn.query.filters import access_of
from cairn.schemas import Principal
from cairn.schemas.config import load_config
from cairn.schemas.row_filter import ACCESS_FIELDS, RowFilter
from cairn.schemas.rows import ChunkRow
from tests.conftest import write_config
from tests.integration import corpus


@pytest.fixture(scope="module")
def reader(tmp_path_factory, prefect_server):
    root = tmp_path_factory.mktemp("milvus-reader")
    corpus.build(root / "wiki")
    config = write_config(
        root / "c.toml",
        root / "index",
        [
            {
                "name": "w",
                "type": "wiki",
                "path": str(root / "wiki" / "acme"),
                "tenant": "acme",
                "acl": ["sre"],
                "acl_ceiling": corpus.ACME_GROUPS,
            },
        ],
    )
    ingest_flow(config_path=str(config))
    opened = open_serving(load_config(config).milvus)
    yield opened
    opened.close()


def _parents(reader: CollectionReader) -> list[ChunkRow]:
    return list(
        reader.iterate(
            'chunk_type == "full_text"',
            ["chunk_id", "document_id", "version_hash", "section_order", "access_control_list"],
        )
    )


def test_rows_by_id_are_point_reads_and_access_admits_exactly_what_the_milvus_filter_lets_through(reader):
    parents = _parents(reader)
    ids = [p.chunk_id for p in parents]
    assert {r.chunk_id for r in reader.rows(ids + ["no-such-id"], ["chunk_id"])} == set(ids) and ids
    assert reader.rows([], ["chunk_id"]) == []

    rows = list(reader.iterate("", ["chunk_id", *ACCESS_FIELDS]))
    principals = [
        Principal("acme", ["sre"]),
        Principal("acme", ["security"]),
        Principal("acme", ["nobody"]),
        Principal("globex", ["sre"]),
        Principal("acme", ["platform", "security"]),
    ]
    for principal in principals:
        for as_of in (None, int(time.time()) + 60, 1_000_000_000):
            access = access_of(principal, as_of)
            in_milvus = {r.chunk_id for r in reader.iterate(access.expr, ["chunk_id"])}
            assert {r.chunk_id for r in rows if access.admits(r)} == in_milvus, (principal, as_of)
    assert {r.chunk_id for r in rows if access_of(Principal("acme", ["sre"]), None).admits(r)}  # not all empty


def test_parent_rows_record_their_neighbours_and_their_documents_child_count(reader):
    parents = list(reader.iterate('chunk_type == "full_text"', ["chunk_id", "document_id", "section_order", "extra"]))
    children = list(reader.iterate('chunk_type == "child"', ["document_id"]))
    by_place = {(p.document_id, p.section_order): p.chunk_id for p in parents}
    for parent in parents:
        doc, order = parent.document_id, parent.section_order
        assert parent.extra["previous_section"] == by_place.get((doc, order - 1), "")
        assert parent.extra["next_section"] == by_place.get((doc, order + 1), "")
        assert parent.extra["document_child_count"] == sum(c.document_id == doc for c in children) > 0


def test_children_per_document_and_neighbours_are_one_call_each_and_filtered(reader):
    parents = _parents(reader)
    documents = {p.document_id for p in parents}
    sre = access_of(Principal("acme", ["sre"]), None)
    counts = reader.children_per_document(documents, sre)
    children = list(reader.iterate('chunk_type == "child"', ["document_id", "access_control_list"]))
    expected: dict[str, int] = {}
    for child in children:
        if "sre" in child.access_control_list:
            expected[child.document_id] = expected.get(child.document_id, 0) + 1
    assert counts == expected and counts
    assert reader.children_per_document(documents, access_of(Principal("acme", ["nobody"]), None)) == {}

    first = min((p for p in parents if "sre" in p.access_control_list), key=lambda p: (p.document_id, p.section_order))
    around = reader.neighbours([first], sre)
    assert all(r.document_id == first.document_id and abs(r.section_order - first.section_order) == 1 for r in around)
    assert reader.neighbours([first], access_of(Principal("acme", ["nobody"]), None)) == []


def test_tenants_and_groups_and_the_encoder_check(reader):
    tenants, groups = reader.tenants_and_groups()
    assert tenants == {"acme"} and "sre" in groups
    assert reader.tenants_and_groups("globex") == (set(), set())
    with pytest.raises(RetrievalError, match="not comparable"):
        check_encoder(reader.client, reader.collection, "another-model/seq1/d384", error=RetrievalError)
    with pytest.raises(StoreError, match="no index at"):
        open_serving(reader.config.model_copy(update={"uri": str(reader.config.uri) + "-missing.db"}))


def test_a_filter_the_engine_evaluates_and_the_row_check_agree_on_scope(reader):
    """RowFilter says one thing two ways: Milvus's evaluation of `expr` and `admits` on the rows read back."""
    rows = list(reader.iterate("", ["chunk_id", "document_id", "chunk_type", "content_type", *ACCESS_FIELDS]))
    kinds = sorted({r.content_type for r in rows})[:1]
    base = access_of(Principal("acme", ["sre"]), None)
    for where in (
        base.narrowed(chunk_type="child"),
        base.narrowed(metadata=(("content_type", tuple(kinds)),)),
        base.narrowed(chunk_type="full_text", documents=tuple(sorted({r.document_id for r in rows})[:3])),
        RowFilter(chunk_type="child"),
    ):
        in_milvus = {r.chunk_id for r in reader.iterate(where.expr, ["chunk_id"])}
        assert {r.chunk_id for r in rows if where.admits(r)} == in_milvus and in_milvus, where
