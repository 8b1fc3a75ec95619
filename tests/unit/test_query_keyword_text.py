"""The BM25 leg searches for the whole question, as Milvus weighs it (a stop word that carries a clause's meaning, a
word said twice), and a section that shares only stop words with the question is no keyword match (its score would
be normalised to a perfect one). #53: searching for the content words alone lost CUAD answers (0.841 -> 0.823)."""

from cairn.index.memory import InMemoryStore
from cairn.query.search import Search, keyword_terms, shares_a_term
from cairn.schemas.config import QueryConfig
from cairn.schemas.row_filter import RowFilter
from cairn.schemas.rows import ChunkRow

KEYWORD_ONLY = QueryConfig(steps={"dense_leg": False})


def keyword_ranking(rows: list[ChunkRow], question: str) -> list[str]:
    store = InMemoryStore()
    store.upsert(rows)
    found = Search(store, KEYWORD_ONLY, "hashing").legs(question, [[1.0]], RowFilter(), 10)
    return found.rankings[0]


def test_a_section_sharing_only_stop_words_with_the_question_is_not_a_keyword_match():
    rows = [
        ChunkRow(chunk_id="ledger", search_text="Promote the replica and repoint the pooler to the new primary"),
        ChunkRow(chunk_id="vault", search_text="Revoke the leaked vault token and rotate the keys"),
    ]
    question = "revoke the leaked vault token zebra-orchid-42"
    assert keyword_ranking(rows, question) == ["vault"]
    assert keyword_ranking(rows[:1], question) == []  # nothing holds its words: the leg finds nothing


def test_a_question_of_stop_words_alone_keeps_what_the_engine_finds():
    rows = [ChunkRow(chunk_id="how", search_text="How the pooler is repointed")]
    assert keyword_terms("how do I") == frozenset() and keyword_ranking(rows, "how do I") == ["how"]


def test_a_stop_word_that_carries_the_clause_weighs_in_the_keyword_leg():
    # CUAD "Post-Termination Services: ... obligations after the termination ...": searched for its content words
    # alone, the question tied the clause with its opposite and lost it to the id order
    rows = [
        ChunkRow(
            chunk_id="a-before", search_text="Services. The Supplier gives support before termination of the contract"
        ),
        ChunkRow(
            chunk_id="b-after", search_text="Services. The Supplier gives support after termination of the contract"
        ),
    ]
    question = "Post-Termination Services: Is a party subject to obligations after the termination of a contract?"
    assert keyword_ranking(rows, question)[0] == "b-after"


def test_a_word_the_question_says_twice_weighs_twice_as_in_milvus():
    # CUAD "License Grant: Does the contract contain a license granted by one party ...": "license" is asked twice
    rows = [
        ChunkRow(chunk_id="a-grant", search_text="The Supplier grant gives the Distributor rights in the Territory"),
        ChunkRow(
            chunk_id="b-license", search_text="The Supplier license gives the Distributor rights in the Territory"
        ),
    ]
    question = "License Grant: Does the contract contain a license granted by one party to its counterparty?"
    assert keyword_ranking(rows, question)[0] == "b-license"
    store = InMemoryStore()
    store.upsert(rows)
    once, twice = (store.search_bm25(q, RowFilter(), 1)[0].score for q in ("license rights", "license license rights"))
    assert twice > once


def test_a_keyword_match_is_judged_on_the_text_bm25_ranked_heading_words_too():
    row = ChunkRow(chunk_id="c", title="Renewal Term", search_text="Renewal Term\nThe parties agree as follows")
    assert shares_a_term(row, keyword_terms("what is the renewal term"))
    assert not shares_a_term(row, keyword_terms("what is the termination fee"))
