"""What chunking a page costs grows with the page, not with how deeply its lists nest: counted without a clock,
as the characters handed to the tokenizer (chunkers/tokens.py), the one cost every stage pays per character."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from cairn.chunkers import markdown_units, pack_sections
from cairn.chunkers import tokens as tokens_module
from cairn.chunkers.markdown import _slice
from cairn.chunkers.tokens import LineTokens, count_tokens
from cairn.schemas.config import ChunkingConfig

CONFIG = ChunkingConfig()
WORDS = "drain restart the worker queue lag ledger replica promote confirm rollback kafka consumer offset".split()


def nested_page(size: int, depth: int) -> str:
    """A list nesting down to `depth` levels and back up, again and again, to about `size` characters."""
    chooser, lines, total, n = random.Random(depth), ["# Plan", ""], 0, 0
    while total < size:
        level = n % depth
        line = "  " * level + f"- step {n}: " + " ".join(chooser.choice(WORDS) for _ in range(10)) + "."
        lines.append(line)
        total, n = total + len(line) + 1, n + 1
    return "\n".join(lines) + "\n"


def tokenized_characters(text: str, monkeypatch) -> int:
    """How many characters chunking `text` hands to the tokenizer (its memo cleared first)."""
    counted = [0]
    encode = tokens_module._encoded_length

    def counting(piece: str) -> int:
        counted[0] += len(piece)
        return encode(piece)

    tokens_module._count.cache_clear()
    monkeypatch.setattr(tokens_module, "_encoded_length", counting)
    pack_sections(markdown_units(text, CONFIG), "Plan", CONFIG)
    monkeypatch.setattr(tokens_module, "_encoded_length", encode)
    return counted[0]


def test_a_page_of_deeply_nested_lists_is_tokenized_a_few_times_over_not_once_per_level(monkeypatch):
    """Each list too large for a section is cut at its items, and each item too large at its own: every level
    used to count its whole text again (about 42 times over at markdown-it's 20 levels of nesting)."""
    shallow = nested_page(200_000, depth=2)
    deep = nested_page(200_000, depth=20)
    per_character = {
        name: tokenized_characters(text, monkeypatch) / len(text)
        for name, text in [("shallow", shallow), ("deep", deep)]
    }
    assert per_character["deep"] < 8
    assert per_character["deep"] < 2 * per_character["shallow"]


def test_twice_the_page_is_twice_the_tokenizing(monkeypatch):
    small, large = nested_page(100_000, depth=20), nested_page(200_000, depth=20)
    ratio = (tokenized_characters(large, monkeypatch) / len(large)) / (
        tokenized_characters(small, monkeypatch) / len(small)
    )
    assert 0.8 < ratio < 1.25


LINE = st.one_of(
    st.just(""),
    st.sampled_from(["  ", "\t", " \u00a0 ", "\x1c"]),  # blank to str.strip(), some not to the tokenizer
    st.text(alphabet=st.sampled_from(list("ab .,:-*#|`'\"()0123 \t\u00e9\u4e2d")), min_size=1, max_size=30),
    st.sampled_from(["- item.", "  - nested: x", "```", "| a | b |", "1. first", "> quote", "---", "end."]),
)


@given(lines=st.lists(LINE, min_size=1, max_size=40), data=st.data())
def test_line_tokens_count_any_run_of_lines_exactly_as_the_tokenizer_does(lines, data):
    counts = LineTokens(lines)
    start = data.draw(st.integers(0, len(lines) - 1))
    end = data.draw(st.integers(start, len(lines)))
    assert counts.of(start, end) == count_tokens(_slice(lines, start, end))
