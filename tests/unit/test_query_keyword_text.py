"""The BM25 leg searches for the question's content words: a section that matches only its stop words is no
keyword match (its score would be normalised to a perfect one)."""

from cairn.index.memory import InMemoryStore
from cairn.query.search import keyword_text
from cairn.schemas.row_filter import RowFilter
from cairn.schemas.rows import ChunkRow


def test_the_keyword_leg_reads_the_content_words_and_a_question_of_stop_words_as_it_is():
    assert keyword_text("revoke the leaked vault token zebra-orchid-42") == "revoke leaked vault token zebra-orchid-42"
    assert keyword_text("how do I") == "how do I"


def test_a_section_sharing_only_stop_words_with_the_question_is_not_a_keyword_match():
    store = InMemoryStore()
    store.upsert(
        [
            ChunkRow(chunk_id="ledger", search_text="Promote the replica and repoint the pooler to the new primary"),
            ChunkRow(chunk_id="vault", search_text="Revoke the leaked vault token and rotate the keys"),
        ]
    )
    question = "revoke the leaked vault token zebra-orchid-42"
    assert {h.row.chunk_id for h in store.search_bm25(question, RowFilter(), 10)} == {"ledger", "vault"}
    assert [h.row.chunk_id for h in store.search_bm25(keyword_text(question), RowFilter(), 10)] == ["vault"]
