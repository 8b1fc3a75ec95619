"""index.rows.document_links: what a parent row records so the query side reads by primary key."""
from __future__ import annotations

from cairn.chunkers import chunk_document
from cairn.index.rows import ChunkedDocument, document_links, parent_chunk_id
from cairn.schemas import ContentType, SourceDocument, SourceType
from cairn.schemas.config import ChunkingConfig

PARAGRAPH = "Drain the node, cordon it, then restart the kubelet and watch the pods reschedule onto healthy nodes. " * 40


def test_each_section_names_the_parent_rows_just_before_and_after_it_and_the_documents_child_count():
    body = "# Node recovery\n\n" + "".join(f"## Step {n}\n\n{PARAGRAPH}\n\n" for n in range(1, 5))
    doc = SourceDocument(document_id="d1", source_name="w", source_type=SourceType.WIKI, source_uri="file:///w/n.md",
                         locator="n.md", title="Node recovery", content=body, tenant_id="acme", access_control_list=["sre"],
                         content_type=ContentType.DOCUMENT, version_hash="v1", created_at=1, updated_at=1, temporal_start=1)
    item = ChunkedDocument(doc, chunk_document(doc, ChunkingConfig()))
    sections = sorted(item.sections, key=lambda s: s.section_order)
    assert len(sections) >= 3
    links = document_links(item)
    ids = [parent_chunk_id(doc, s) for s in sections]
    for i, section in enumerate(sections):
        link = links[section.section_id]
        assert link["previous_section"] == (ids[i - 1] if i else "")
        assert link["next_section"] == (ids[i + 1] if i + 1 < len(ids) else "")
        assert link["section_count"] == len(sections)
        assert link["document_child_count"] == sum(len(s.chunks) for s in sections) > len(sections)
