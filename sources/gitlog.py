"""What git prints, read: commits and `git log --raw` records, path globs, and a file's content type by its path.
Pure functions, no subprocess (sources/git.py runs git)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

from cairn.schemas import TEMPORAL_OPEN, ContentType

FIELD, RECORD = "\x1f", "\x1e"
LOG_FORMAT = f"--format={RECORD}%H{FIELD}%ct{FIELD}%an{FIELD}%s"
MARKDOWN = (".md", ".markdown")
TERRAFORM = (".tf", ".tfvars", ".hcl")
YAML = (".yaml", ".yml")


@dataclass(frozen=True)
class Commit:
    sha: str
    time: int
    author: str
    subject: str


@dataclass(frozen=True)
class Version:
    """A file's content as written by one commit, valid until `end` (TEMPORAL_OPEN while current)."""

    path: str
    blob: str
    commit: Commit
    end: int = TEMPORAL_OPEN


def content_type_of(path: str) -> ContentType:
    pure = PurePosixPath(path)
    suffix = pure.suffix.lower()
    if suffix in MARKDOWN:
        return ContentType.README if pure.stem.lower() == "readme" else ContentType.RUNBOOK
    if suffix in TERRAFORM:
        return ContentType.TERRAFORM
    if suffix in YAML:
        return ContentType.YAML
    return ContentType.CODE


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern:
    """A path glob: `**/` any folders (none included), `*` and `?` within one path segment."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def matches(path: str, patterns) -> bool:
    return any(_glob_regex(p).match(path) for p in patterns)


def parse_commit(header: str) -> Commit:
    sha, when, author, subject = (header.split(FIELD) + ["", "", ""])[:4]
    return Commit(sha.strip(), int(when or 0), author, subject)


def parse_raw(record: str) -> tuple[Commit, list[tuple[str, str, str, str]]]:
    """One `git log --raw` record -> (commit, [(status, new blob, old path, new path)])."""
    header, *lines = record.split("\n")
    changes = []
    for line in lines:
        if not line.startswith(":"):
            continue
        meta, *paths = line.split("\t")
        fields = meta.split()
        status = fields[4][0]
        blob = fields[3]
        old_path = paths[0]
        new_path = paths[1] if status in ("R", "C") else (paths[0] if status != "D" else "")
        if status == "C":
            old_path = ""  # a copy leaves its source in place
        changes.append((status, blob, old_path, new_path))
    return parse_commit(header.strip()), changes
