"""index.rows: what a row's `extra` records about its links (schemas/row_links.py), so the query side reads by
primary key, the ledger checks completeness and the quality checks know a definition from prose."""

from __future__ import annotations

import numpy as np

from cairn.chunkers import chunk_document
from cairn.index.rows import ChunkedDocument, parent_chunk_id, parent_links, section_rows
from cairn.schemas import Chunk, ChunkType, ContentType, Section, SourceDocument, SourceType
from cairn.schemas.config import ChunkingConfig
from cairn.schemas.row_links import ChildMarks, DocumentStamp, ParentLinks
from cairn.schemas.rows import ChunkRow

STEP = "Drain the node, cordon it, then restart the kubelet and watch the pods reschedule onto healthy nodes. "
PARAGRAPH = STEP * 40


def document(content: str = "", **fields) -> SourceDocument:
    return SourceDocument(
        document_id="d1",
        source_name="w",
        source_type=SourceType.WIKI,
        source_uri="file:///w/n.md",
        locator="n.md",
        title="Node recovery",
        content=content,
        tenant_id="acme",
        access_control_list=["sre"],
        content_type=ContentType.DOCUMENT,
        version_hash="v1",
        created_at=1,
        updated_at=1,
        temporal_start=1,
        **fields,
    )


def test_each_section_names_the_parent_rows_just_before_and_after_it_and_the_documents_child_count():
    doc = document("# Node recovery\n\n" + "".join(f"## Step {n}\n\n{PARAGRAPH}\n\n" for n in range(1, 5)))
    item = ChunkedDocument(doc, chunk_document(doc, ChunkingConfig()))
    sections = sorted(item.sections, key=lambda s: s.section_order)
    assert len(sections) >= 3
    links = parent_links(item)
    ids = [parent_chunk_id(doc, s) for s in sections]
    for i, section in enumerate(sections):
        link = links[section.section_id]
        assert link.previous_section == (ids[i - 1] if i else "")
        assert link.next_section == (ids[i + 1] if i + 1 < len(ids) else "")
        assert link.section_count == len(sections)
        assert link.document_child_count == sum(len(s.chunks) for s in sections) > len(sections)
        assert (link.abstract, link.abstract_token_count) == (section.abstract, section.abstract_token_count)
        assert link.child_count == len(section.chunks)


SECTION = Section(
    section_id="definitions",
    breadcrumbs=["Definitions"],
    section_level=1,
    section_order=0,
    parent_section_id="",
    text="Agreement means this agreement. The parties agree.",
    token_count=9,
    abstract="Definitions.",
    abstract_token_count=2,
    extra={"page_start": 1, "page_end": 1},
    chunks=[
        Chunk(0, "Agreement means this agreement.", 5, term="Agreement"),
        Chunk(1, "The parties agree.", 4),
        Chunk(2, "Made as of March 1.", 5, alone=True),
    ],
)


def rows_of(doc: SourceDocument) -> list[ChunkRow]:
    item = ChunkedDocument(doc, [SECTION])
    zero = np.zeros(4, dtype=np.float32)
    return section_rows(doc, SECTION, zero, [zero] * 3, parent_links(item)[SECTION.section_id])


def test_a_parent_row_holds_the_sources_metadata_the_stamp_the_sections_extra_then_its_links_as_before():
    doc = document(extra={"page_count": 3}, access="3f2a", warnings=["page 2 has no text layer"])
    parent = rows_of(doc)[0]
    assert parent.chunk_type == ChunkType.FULL_TEXT.value
    assert list(parent.extra.items()) == [
        ("page_count", 3),
        ("warnings", ["page 2 has no text layer"]),
        ("access", "3f2a"),
        ("page_start", 1),
        ("page_end", 1),
        ("abstract", "Definitions."),
        ("abstract_token_count", 2),
        ("child_count", 3),
        ("section_count", 1),
        ("document_child_count", 3),
        ("previous_section", ""),
        ("next_section", ""),
    ]


def test_a_child_row_carries_the_stamp_and_only_the_marks_it_has():
    children = rows_of(document(access="3f2a"))[1:]
    assert [c.extra for c in children] == [
        {"access": "3f2a", "page_start": 1, "page_end": 1, "defined_term": "Agreement"},
        {"access": "3f2a", "page_start": 1, "page_end": 1},
        {"access": "3f2a", "page_start": 1, "page_end": 1, "own_child": True},
    ]
    assert [ChildMarks.from_row(c).stands_alone for c in children] == [True, False, True]


def test_the_rows_read_back_as_the_document_and_section_they_were_built_from():
    doc = document(access="3f2a", warnings=["page 2 has no text layer"])
    parent, *children = rows_of(doc)
    assert DocumentStamp.from_row(parent) == DocumentStamp.of(doc)
    assert all(DocumentStamp.from_row(c) == DocumentStamp.of(doc) for c in children)
    links = ParentLinks.from_row(parent)
    assert (links.section_count, links.child_count, links.neighbours) == (1, len(children), [])
    assert ParentLinks.from_row(children[0]) == ParentLinks()  # a child records no links of its own


def test_a_document_not_stamped_with_access_nor_warned_about_writes_neither_key():
    parent = rows_of(document())[0]
    assert "access" not in parent.extra and "warnings" not in parent.extra
