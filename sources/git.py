"""Git repositories: one document per file path at a ref, with its history.

The repository (a local path, a .bundle file or a clone URL) is mirrored into a cache folder on the first
run and fetched on later ones. Discovery lists the tree at the ref (`git ls-tree`, no file is read): the
version of a file is its blob id, so an unchanged file is skipped by the ledger without being read, and a
file that is deleted or renamed disappears from the listing and its rows are retired like any stale
document. The cursor remembers the commit last ingested, which bounds the `git log` that dates the
changed files to the commits since then.

A file's updated_at and temporal_start are the time of the last commit (on the ref's first-parent line)
that touched it; commit id, author and subject go into `extra`. `history(since, until, limit)` yields the
past versions of every included file for a history backfill, each valid from the commit that wrote it
until the next commit that changed, renamed or deleted it.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from cairn.redact import redact
from cairn.schemas import ContentType, DocumentRef, SourceDocument, SourceType
from cairn.schemas.source_config import GitSourceConfig
from cairn.sources import frontmatter as fm
from cairn.sources.base import Connector, DiscoveryFailure, DocumentError, DocumentRefused, NothingToIndex, SourceError
from cairn.sources.gitauth import REMOTE_COMMANDS, split_credentials
from cairn.sources.gitlog import (
    LOG_FORMAT,
    RECORD,
    Commit,
    PastVersion,
    Version,
    content_type_of,
    matches,
    parse_commit,
    parse_raw,
    past_versions,
    span_start,
)
from cairn.sources.wiki import decode_markdown

LOCAL_TIMEOUT = 120  # seconds for a git command on the mirror (no network): a hang guard
_SUBMODULE_MODE = "160000"


class GitSource(Connector[GitSourceConfig]):
    kind = SourceType.GIT
    cursor_key = "commit"  # the commit last ingested

    def __init__(self, config: GitSourceConfig, cursor: dict | None = None) -> None:
        super().__init__(config, cursor)
        self.auth = split_credentials(config.repository)  # an http(s) URL's credentials: in git's env only
        self.repo = self.auth.url  # what git is given: never an http(s) URL's user info
        self.shown = redact(self.repo)  # what anything stored, shown or logged says
        self.ref = config.ref
        self.mirror = (Path(config.cache_dir) / f"{config.name}.git").absolute()
        self._head: Commit | None = None
        self._touched: dict[str, Commit] | None = None
        self._past: dict[str, Version] = {}
        self.broken_refs: list[str] = []  # refs of the repository that point to objects it does not have

    # ---- the mirror -------------------------------------------------------------------------------

    def _git(
        self,
        *args: str,
        check: bool = True,
        timeout: float = LOCAL_TIMEOUT,
        cwd: Path | None = None,
        stdin: bytes | None = None,
    ) -> str:
        """git's output; its own process group, killed whole at `timeout` (git runs a clone's transport in a
        helper process of its own, which would otherwise outlive it, connection and all)."""
        env = dict(os.environ, GIT_TERMINAL_PROMPT="0", LC_ALL="C", GIT_ASKPASS="", SSH_ASKPASS="")
        command = ["git", "-c", "core.quotePath=false", *args]
        if args[0] in REMOTE_COMMANDS:
            command[1:1] = self.auth.options()
            env.update(self.auth.env)
        if cwd is None:
            command[1:1] = ["--git-dir", str(self.mirror)]
        process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
        try:
            out, err = process.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            which = "the source's timeout_seconds" if args[0] in REMOTE_COMMANDS else "a local git command's limit"
            raise SourceError(
                f"source {self.name!r}: git {args[0]} on {self.shown} timed out after {timeout:g} s ({which})"
            ) from None
        except BaseException:
            _kill_group(process)
            raise
        if check and process.returncode != 0:
            message = err.decode("utf-8", "replace").strip().splitlines()
            raise _GitFailed(redact(message[-1]) if message else f"git {args[0]} exited {process.returncode}")
        return out.decode("utf-8", "surrogateescape")

    def _remote(self) -> str:
        if "://" in self.repo or re.match(r"^[\w.-]+@[\w.-]+:", self.repo):
            return self.repo  # a clone URL (https://, ssh://, git@host:path)
        local = Path(self.repo)
        if not local.exists():
            raise SourceError(f"source {self.name!r}: repository {self.shown} does not exist")
        return str(local.resolve())

    def _sync_mirror(self) -> None:
        remote = self._remote()
        try:
            if not (self.mirror / "HEAD").exists():
                self.mirror.parent.mkdir(parents=True, exist_ok=True)
                self._git(
                    "clone",
                    "--mirror",
                    "--quiet",
                    remote,
                    str(self.mirror),
                    timeout=self.config.timeout_seconds,
                    cwd=self.mirror.parent,
                )
                self._drop_broken_refs()  # a local clone copies refs as they are, broken ones included
            else:
                self._git("remote", "set-url", "origin", remote)
                self._fetch()
        except _GitFailed as exc:
            what = "bundle" if remote.endswith(".bundle") else "repository"
            raise SourceError(
                f"source {self.name!r}: cannot read the {what} {self.shown}: {redact(str(exc))}"
            ) from None

    def _fetch(self) -> None:
        """Fetch every ref; when that fails, this source's ref alone. One ref of a corrupt repository that
        points to an object it does not have fails a whole mirror fetch (`not our ref`), and a broken ref in
        the mirror fails any fetch, yet this source reads only its own ref."""
        try:
            self._git("fetch", "--prune", "--quiet", "origin", timeout=self.config.timeout_seconds)
            return
        except _GitFailed as everything:
            failure = everything
        self._drop_broken_refs()
        try:
            target = self._remote_ref_name()
        except _GitFailed:
            raise failure from None  # the remote itself is unreachable: say what the fetch said
        if target is None:
            raise _GitFailed(f"ref {self.ref!r} is not on the remote, and fetching every ref failed: {failure}")
        try:
            self._git("fetch", "--quiet", "origin", f"+{target}:{target}", timeout=self.config.timeout_seconds)
        except _GitFailed as exc:
            raise _GitFailed(f"cannot fetch ref {self.ref!r} ({target}): {exc}") from None

    def _remote_ref_name(self) -> str | None:
        """The full name (refs/heads/main) of the source's ref on the remote, or None (a commit id, or absent)."""
        listing = self._git("ls-remote", "--symref", "origin", self.ref, timeout=self.config.timeout_seconds)
        names = []
        for line in listing.splitlines():
            if line.startswith("ref: "):
                return line[5:].split("\t")[0]  # HEAD -> the branch it names
            names.append(line.partition("\t")[2])
        for wanted in (self.ref, f"refs/heads/{self.ref}", f"refs/tags/{self.ref}"):
            if wanted in names and wanted.startswith("refs/"):
                return wanted
        return None

    def _drop_broken_refs(self) -> None:
        """Delete the mirror's refs that point to objects it does not have (remembered for messages)."""
        pairs = [
            line.split(" ", 1)
            for line in self._git("for-each-ref", "--format=%(objectname) %(refname)").splitlines()
            if line
        ]
        if not pairs:
            return
        checked = self._git(
            "cat-file", "--batch-check=%(objectname)", stdin="".join(f"{sha}\n" for sha, _ in pairs).encode()
        )
        for (_sha, name), line in zip(pairs, checked.splitlines()):
            if line.endswith(" missing"):
                self.broken_refs.append(name)
                self._git("update-ref", "-d", name, check=False)

    def head(self) -> Commit:
        if self._head is None:
            self._sync_mirror()
            sha = self._git("rev-parse", "--verify", "--quiet", f"{self.ref}^{{commit}}", check=False).strip()
            if not sha:
                branches = self._git("for-each-ref", "--format=%(refname:short)", "refs/heads", check=False).split()
                if self.ref == "HEAD" and len(branches) == 1:  # a bundle without HEAD: its only branch
                    sha = self._git("rev-parse", f"refs/heads/{branches[0]}").strip()
                else:
                    known = ", ".join(branches[:10]) or "none"
                    broken = (
                        f"; refs pointing to missing objects: {', '.join(self.broken_refs)}" if self.broken_refs else ""
                    )
                    raise SourceError(
                        f"source {self.name!r}: ref {self.ref!r} not found in {self.shown} (branches: {known}{broken})"
                    )
            self._head = self._commit(sha)
        return self._head

    def _commit(self, sha: str) -> Commit:
        line = self._git("show", "-s", LOG_FORMAT, sha).strip(RECORD + "\n")
        return parse_commit(line)

    # ---- the Source protocol ----------------------------------------------------------------------

    def discover(self) -> Iterator[DocumentRef | DiscoveryFailure]:
        head = self.head()
        limit = self.config.max_file_bytes
        for line in self._git("ls-tree", "-r", "-z", "--long", head.sha).split("\0"):
            if not line:
                continue
            meta, _, path = line.partition("\t")
            mode, kind, blob, size = meta.split()
            if not self._included(path):
                continue
            if mode == _SUBMODULE_MODE:
                yield self.failure(path, "a git submodule: not followed (add its repository as a source)")
            elif kind != "blob" or mode == "120000" or size == "0":
                continue  # a symlink's target is indexed under its own path; an empty file holds nothing
            elif int(size) > limit:
                yield self.failure(path, f"file is {int(size):,} bytes, over the source's max_file_bytes ({limit:,})")
            else:
                yield self.document_ref(path, blob)

    def load(self, ref: DocumentRef) -> SourceDocument:
        version = self._past.get(ref.locator) or Version(ref.locator, ref.version_hash, self._last_commit(ref.locator))
        try:
            raw = self._git("cat-file", "blob", version.blob).encode("utf-8", "surrogateescape")
        except _GitFailed as exc:
            raise DocumentError(ref.locator, f"cannot read blob {version.blob[:12]}: {exc}") from None
        return self._document(version, raw, current=ref.locator not in self._past)

    def next_mark(self) -> str:
        return self.head().sha

    def history(
        self, since: datetime | None, until: datetime | None, limit: int | None = None
    ) -> Iterator[DocumentRef]:
        """Past versions (not the ones current at the ref) that were valid at some time in [since, until),
        or that the last `limit` commits wrote, oldest first; each ref's locator is "path@commit"."""
        commits = self._log()
        lo = int(since.timestamp()) if since else None
        hi = int(until.timestamp()) if until else None
        if limit is not None:
            recent = {c.sha for c, _ in commits[-limit:]} if limit > 0 else set()
        for past in past_versions(commits):
            version = past.version
            wanted = recent if limit is not None else None
            in_window = (lo is None or version.end > lo) and (hi is None or version.commit.time < hi)
            if (wanted is not None and version.commit.sha not in wanted) or (wanted is None and not in_window):
                continue
            yield from self._past_ref(past)

    def recent_history(self, depth: int) -> Iterator[DocumentRef]:
        """keep_history's own history, with no backfill: the past versions that the commits since the last run
        replaced (valid at some time since), or, on a first run (no cursor on the ref's line), those the last
        `depth` commits replaced: as-of questions answer back to the oldest of those commits."""
        commits = self._log()
        start = span_start([c for c, _ in commits], self.resumed_mark, depth)
        for past in past_versions(commits):
            if past.ended_by >= start:
                yield from self._past_ref(past)

    def _log(self) -> list[tuple[Commit, list[tuple[str, str, str, str]]]]:
        """The ref's first-parent log with each commit's changes, oldest first."""
        head = self.head()
        log = self._git("log", "--first-parent", "-m", "--raw", "--no-abbrev", "-M", "--reverse", LOG_FORMAT, head.sha)
        return [parse_raw(record) for record in log.split(RECORD) if record.strip()]

    def _past_ref(self, past: PastVersion) -> Iterator[DocumentRef]:
        """The ref of a past version that is included and was ever observable (not replaced in the same second)."""
        version = past.version
        if self._included(version.path) and version.end > version.commit.time:
            locator = f"{version.path}@{version.commit.sha[:12]}"
            self._past[locator] = version
            yield DocumentRef(self.name, locator, self.document_id(version.path), version.blob)

    def _included(self, path: str) -> bool:
        return matches(path, self.config.include) and not matches(path, self.config.exclude)

    # ---- documents --------------------------------------------------------------------------------

    def _last_commit(self, path: str) -> Commit:
        """The last commit on the ref's first-parent line that touched `path`."""
        if self._touched is None:
            self._touched = {}
            since = self.resumed_mark
            span = self.head().sha if not self._is_ancestor(since) else f"{since}..{self.head().sha}"
            log = self._git("log", "--first-parent", "-m", "--name-only", "--no-renames", LOG_FORMAT, span)
            for record in log.split(RECORD):
                if not record.strip():
                    continue
                header, *paths = record.split("\n")
                writer = parse_commit(header)
                for changed in paths:
                    if changed:
                        self._touched.setdefault(changed, writer)
        commit = self._touched.get(path)
        if commit is None:  # unchanged since the cursor (a repair of rows removed behind our back)
            line = self._git("log", "-1", "--first-parent", "-m", LOG_FORMAT, self.head().sha, "--", path).strip(
                RECORD + "\n"
            )
            commit = parse_commit(line) if line else self.head()
            self._touched[path] = commit
        return commit

    def _is_ancestor(self, sha: str | None) -> bool:
        if not sha or not re.fullmatch(r"[0-9a-f]{40}", sha):
            return False
        try:  # like every git command on the mirror: its own process group, killed whole at LOCAL_TIMEOUT
            self._git("merge-base", "--is-ancestor", sha, self.head().sha)
        except _GitFailed:  # exit 1: not an ancestor; 128: a commit the mirror no longer has
            return False
        return True

    def _document(self, version: Version, raw: bytes, current: bool) -> SourceDocument:
        path = version.path
        if b"\x00" in raw[:8192]:
            raise DocumentError(path, "binary file (contains NUL bytes): not indexed")
        text = decode_markdown(path, raw)
        content_type = content_type_of(path)
        meta: dict = {}
        title = path
        if content_type in (ContentType.RUNBOOK, ContentType.README):
            try:
                if not fm.has_content(text):
                    raise NothingToIndex(path, fm.FRONT_MATTER_ONLY)
                meta, text = fm.split_front_matter(text)
            except ValueError as exc:
                raise DocumentError(path, str(exc)) from None
            heading = fm.H1.search(text)
            title = fm.string(meta, "title") or (heading.group(1).strip() if heading else path)
            content_type = ContentType.parse(fm.string(meta, "content_type"), content_type)
        if not text.strip():
            raise NothingToIndex(path, "empty file (or only white space): nothing to index")
        try:
            grant = self.granted(path, *fm.narrowed_access(meta, self.config))
        except fm.AccessRefused as exc:
            raise DocumentRefused(path, str(exc)) from None
        except ValueError as exc:
            raise DocumentError(path, str(exc)) from None
        commit = version.commit
        return self.document(
            path,
            version.blob,
            grant,
            source_uri=self.config.uri_template.format(repo=self._repo_uri(), commit=commit.sha, path=path),
            title=title,
            content=text,
            content_type=content_type,
            created_at=commit.time,
            updated_at=commit.time,
            temporal_start=commit.time,
            temporal_end=version.end,
            service_name=fm.string(meta, "service") or self.config.service,
            tags=fm.string_list(meta, "tags") or [],
            doc_tag=fm.string(meta, "doc_tag") or "",
            extra={"commit": commit.sha, "author": commit.author, "commit_message": commit.subject, "path": path},
            is_current=current,
        )

    def _repo_uri(self) -> str:
        """The repository as a citation shows it: never with the credentials of a clone URL."""
        remote = self._remote()
        return redact(remote) if "://" in remote or "@" in remote.split("/")[0] else Path(remote).as_uri()


class _GitFailed(SourceError):
    pass


def _kill_group(process: subprocess.Popen) -> None:
    """Kill a git command and every process it started (its session), and reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.communicate()
