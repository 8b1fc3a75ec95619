"""schemas.row_links: what a row's `extra` records about its links, written and read back through one type.

The keys are spelled out here on purpose: they are the stored row format, which collections written by earlier
releases share, so a rename must fail a test."""

from __future__ import annotations

from cairn.schemas.row_links import ChildMarks, DocumentStamp, ParentLinks

PARENT = ParentLinks(
    abstract="Restart the kubelet.",
    abstract_token_count=5,
    child_count=3,
    section_count=4,
    document_child_count=11,
    previous_section="p1",
    next_section="",
)


def test_a_parent_writes_every_link_under_the_keys_collections_already_hold_in_this_order():
    assert list(PARENT.to_row().items()) == [
        ("abstract", "Restart the kubelet."),
        ("abstract_token_count", 5),
        ("child_count", 3),
        ("section_count", 4),
        ("document_child_count", 11),
        ("previous_section", "p1"),
        ("next_section", ""),
    ]


def test_each_record_reads_back_what_it_wrote():
    stamp, marks = DocumentStamp(access="3f2a", warnings=["page 2 has no text layer"]), ChildMarks("Agreement", True)
    assert ParentLinks.from_row({"extra": PARENT.to_row()}) == PARENT
    assert DocumentStamp.from_row({"extra": stamp.to_row()}) == stamp
    assert ChildMarks.from_row({"extra": marks.to_row()}) == marks


def test_the_records_read_their_own_keys_out_of_a_row_that_holds_all_of_them_and_the_sources_metadata():
    extra = {"page_count": 9, "access": "3f2a", "page_start": 2, **PARENT.to_row()}
    assert ParentLinks.from_row({"extra": extra}) == PARENT
    assert DocumentStamp.from_row({"extra": extra}) == DocumentStamp(access="3f2a")


def test_a_row_written_before_the_links_existed_reads_as_unknown_counts_and_unrecorded_neighbours():
    links = ParentLinks.from_row({"extra": {"page_count": 9}})
    assert (links.section_count, links.child_count) == (-1, -1)  # the ledger sees such a version as incomplete
    assert links.document_child_count is None and links.neighbours is None  # the retriever scans instead
    assert (links.abstract, links.abstract_token_count) == ("", None)
    assert DocumentStamp.from_row({"extra": {}}) == DocumentStamp(access="", warnings=[])
    assert ChildMarks.from_row({"extra": {}}) == ChildMarks(defined_term="", own_child=False)


def test_a_row_without_extra_at_all_reads_as_the_defaults():
    assert ParentLinks.from_row({"extra": None}) == ParentLinks() == ParentLinks.from_row({})


def test_the_neighbours_are_the_sections_that_exist_on_either_side():
    assert PARENT.neighbours == ["p1"]
    assert ParentLinks(previous_section="", next_section="").neighbours == []  # a one-section document
    assert ParentLinks(previous_section="p1", next_section="p3").neighbours == ["p1", "p3"]


def test_a_plain_child_and_an_unstamped_document_write_no_keys():
    assert ChildMarks().to_row() == {} and not ChildMarks().stands_alone
    assert DocumentStamp().to_row() == {}


def test_a_definition_and_an_opening_statement_each_stand_alone_and_write_only_their_own_key():
    assert ChildMarks(defined_term="Agreement").to_row() == {"defined_term": "Agreement"}
    assert ChildMarks(own_child=True).to_row() == {"own_child": True}
    assert ChildMarks(defined_term="Agreement").stands_alone and ChildMarks(own_child=True).stands_alone


def test_stored_values_are_read_as_their_fields_types():
    links = ParentLinks.from_row({"extra": {"section_count": "4", "document_child_count": 11.0}})
    assert (links.section_count, links.document_child_count) == (4, 11)
    assert type(links.document_child_count) is int
