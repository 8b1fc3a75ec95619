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


Change = tuple[str, str, str, str]  # (status, new blob, old path, new path) of `git log --raw`


@dataclass(frozen=True)
class PastVersion:
    """A version no longer current at the ref: `version.end` is when the commit at `ended_by` (its index in the
    log, oldest first) changed, renamed or deleted it."""

    version: Version
    ended_by: int


def past_versions(commits: list[tuple[Commit, list[Change]]]) -> list[PastVersion]:
    """Every version the first-parent log (oldest first) wrote and a later commit replaced, oldest first."""
    alive: dict[str, Version] = {}
    past: list[PastVersion] = []

    def end(path: str, index: int, when: int) -> None:
        version = alive.pop(path, None)
        if version is not None:
            past.append(PastVersion(Version(version.path, version.blob, version.commit, when), index))

    for index, (commit, changes) in enumerate(commits):
        for status, blob, old_path, new_path in changes:
            end(old_path, index, commit.time)
            if status != "D" and new_path:
                end(new_path, index, commit.time)
                alive[new_path] = Version(new_path, blob, commit)
    return sorted(past, key=lambda p: p.version.commit.time)


def span_start(commits: list[Commit], since_sha: str | None, depth: int) -> int:
    """Where the history a run loads starts, as an index into the first-parent log (oldest first): after the commit
    `since_sha` (the last run's) when it is on that line, else `depth` commits before the head (0: the whole log
    when it is shorter; len(commits): nothing)."""
    shas = [c.sha for c in commits]
    if since_sha in shas:
        return shas.index(since_sha) + 1
    return max(0, len(commits) - depth)
