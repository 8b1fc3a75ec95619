from query.retriever import citation, one_version_per_document, time_filter


def row(chunk_id, document_id, version, start):
    return {"chunk_id": chunk_id, "document_id": document_id, "version_hash": version, "temporal_start": start}


def test_an_answer_never_mixes_two_versions_of_one_document():
    rows = [row("a1", "a", "v1", 100), row("a2", "a", "v2", 200), row("a3", "a", "v2", 200), row("b1", "b", "v9", 50)]
    assert one_version_per_document(rows) == {"a2", "a3", "b1"}


def test_time_filter_defaults_to_current_rows_and_as_of_uses_the_bounds():
    assert time_filter(None) == "is_current == true"
    assert time_filter(1_700_000_000) == "temporal_start <= 1700000000 and temporal_end > 1700000000"


def test_citation_says_the_title_once():
    cited = citation({"title": "Ledger failover", "breadcrumbs": ["Ledger failover", "Procedure"], "section_id": "lf.procedure",
                      "updated_at": 1_773_446_400, "version_hash": "e755cdc0ff", "source_uri": "file:///w/lf.md"})
    assert cited == "Ledger failover › Procedure (ve755cdc, updated 2026-03-14) file:///w/lf.md#lf.procedure"


def test_a_section_that_is_the_whole_page_is_cited_by_its_title_alone():
    cited = citation({"title": "Ledger failover", "breadcrumbs": ["Ledger failover"], "section_id": "lf",
                      "updated_at": None, "version_hash": "e755cdc0ff", "source_uri": "file:///w/lf.md"})
    assert cited == "Ledger failover (ve755cdc, updated unknown) file:///w/lf.md#lf"


def test_a_pdf_section_is_cited_with_its_pages():
    base = {"title": "Pooling and Servicing Agreement", "breadcrumbs": ["ARTICLE I DEFINITIONS"], "section_id": "article-i",
            "updated_at": None, "version_hash": "abcdef12", "source_uri": "s3://legal/psa.pdf"}
    assert ", pp. 2-3)" in citation({**base, "extra": {"page_start": 2, "page_end": 3}})
    assert ", p. 4)" in citation({**base, "extra": {"page_start": 4, "page_end": 4}})
