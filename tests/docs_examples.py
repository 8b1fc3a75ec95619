"""The fenced code blocks of README.md and docs/*.md, as the docs-examples tests read them.

Every `bash` and `python` block runs as printed against the sample index (tests/integration/test_docs_examples.py)
unless the line just above its fence excuses it, with the reason, in a comment the rendered page does not show:

    <!-- not run: needs a Milvus server -->

so a new block is either run or excused (tests/unit/test_docs_examples_listed.py holds every block to that, and
checks the `toml` and `json` blocks: a configuration that loads, JSON that parses). Other blocks (no language:
diagrams) are text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import REPO

PAGES = ["README.md", *sorted(f"docs/{p.name}" for p in (REPO / "docs").glob("*.md"))]
RUN = ("bash", "python")  # what runs; toml and json are checked; a block without a language is text
EXCUSE = re.compile(r"<!--\s*not run:\s*(.+?)\s*-->")
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```\s*$", re.S | re.M)


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository: README.md, docs/cli.md
    number: int  # 1-based among the page's fenced blocks
    lang: str
    code: str
    excuse: str | None  # why it does not run here, from the comment above its fence

    @property
    def name(self) -> str:
        return f"{self.page} block {self.number} ({self.lang or 'text'})"


def blocks(page: str) -> list[Block]:
    """The fenced blocks of one page, in order, each with the excuse written just above it (if any)."""
    text = (REPO / page).read_text(encoding="utf-8")
    found = []
    for number, match in enumerate(_FENCE.finditer(text), 1):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        excuse = EXCUSE.search(before)
        found.append(Block(page, number, match.group(1), match.group(2), excuse.group(1) if excuse else None))
    return found


def every_block() -> list[Block]:
    return [block for page in PAGES for block in blocks(page)]


def to_run(page_prefix: str = "") -> list[Block]:
    """The bash and python blocks that run (not excused) of the pages whose path starts with `page_prefix`."""
    return [b for b in every_block() if b.lang in RUN and b.excuse is None and b.page.startswith(page_prefix)]


def commands(code: str) -> list[str]:
    """A bash block's commands: its lines, a trailing backslash joining the next, blank lines dropped."""
    joined = re.sub(r"\\\n\s*", " ", code)
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def answers(command: str, stdout: str) -> bool:
    """Whether a command's output is an answer: a query lists its results (`1. fused ...`); any other `cairn`
    command prints something; a shell line (export, eval) needs no output."""
    if " query " in f" {command} ":
        return bool(re.search(r"^1\. fused ", stdout, re.M))
    return bool(stdout.strip()) if command.startswith(".venv/bin/cairn") else True


def sample_root(folder: Path) -> Path:
    """Where a page's commands run: `folder`, holding a copy of data/ (tests/conftest.py sample_copy: its index
    lands in the copy) and `.venv` (a link to this checkout's), so `.venv/bin/cairn` and `data/cairn.toml` mean
    there what they mean at the repository's root."""
    from tests.conftest import sample_copy

    sample_copy(folder)
    (folder / ".venv").symlink_to(REPO / ".venv")
    return folder
