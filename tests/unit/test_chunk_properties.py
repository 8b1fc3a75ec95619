"""Properties of chunk_document over generated Markdown: nothing lost, sizes bounded, ids unique."""

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cairn.chunkers.markdown import markdown_units
from cairn.chunkers.sections import pack_sections
from cairn.schemas.config import ChunkingConfig

CONFIG = ChunkingConfig()
_VOCABULARY = (
    "gateway restart the pod queue drains replica Redis latency budget token-service rollback kubectl é 再起動 503"
)
_WORDS = st.sampled_from(_VOCABULARY.split())


def _words_of(seed: int) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(_VOCABULARY.split()) for _ in range(rng.randint(3, 25))).capitalize() + "."


def _sentence():
    """3-25 words of the vocabulary, built from one drawn seed: a document is thousands of words, and drawing each
    word on its own made generating the examples most of these tests' time (one draw a sentence halves it)."""
    return st.integers(0, 2**32 - 1).map(_words_of)


def _block():
    paragraph = st.lists(_sentence(), min_size=1, max_size=40).map(" ".join)
    heading = st.tuples(st.integers(1, 6), st.lists(_WORDS, min_size=1, max_size=4)).map(
        lambda t: "#" * t[0] + " " + " ".join(t[1])
    )
    listing = st.lists(_sentence(), min_size=1, max_size=30).map(lambda items: "\n".join(f"- {i}" for i in items))
    fence = st.lists(_sentence(), min_size=1, max_size=30).map(lambda lines: "```sh\n" + "\n".join(lines) + "\n```")
    table = st.lists(_sentence(), min_size=1, max_size=30).map(
        lambda rows: "| step | note |\n|---|---|\n" + "\n".join(f"| {n} | {r} |" for n, r in enumerate(rows))
    )
    return st.one_of(paragraph, heading, heading, listing, fence, table)


def _is_subsequence(needle: str, haystack: str) -> bool:
    """Children may repeat a fence or table header when they cut one; they never drop or reorder text."""
    rest = iter(haystack)
    return all(char in rest for char in needle)


documents = st.lists(_block(), min_size=1, max_size=30).map("\n\n".join)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_all_text_lands_in_the_sections_once_and_in_order(body):
    sections = pack_sections(markdown_units(body, CONFIG), "Doc", CONFIG)
    section_lines = [line for s in sections for line in s.text.split("\n") if line.strip()]
    body_lines = [line for line in body.split("\n") if line.strip()]
    # pre-split paragraphs may cut a line between sentences; the words and their order survive
    assert "".join(section_lines).replace(" ", "") == "".join(body_lines).replace(" ", "")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_sections_are_bounded_unique_and_covered_by_their_children(body):
    sections = pack_sections(markdown_units(body, CONFIG), "Doc", CONFIG)
    assert len({s.section_id for s in sections}) == len(sections)
    for section in sections:
        if section.token_count > CONFIG.parent_max_tokens:  # only a block too big to split, with its headings
            assert all(block.startswith("#") for block in section.text.split("\n\n")[:-1])
        assert _is_subsequence("".join(section.text.split()), "".join("".join(c.text for c in section.chunks).split()))
        assert section.abstract_token_count <= CONFIG.abstract_max_tokens
        assert 0.0 <= section.quality_flags.chunk_health_score <= 1.0
