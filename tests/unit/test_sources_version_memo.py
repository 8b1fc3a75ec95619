"""The folder fast path: a file whose (size, mtime_ns, ctime_ns, inode) did not move since the last discovery is
given its remembered version without being read; everything else is read as before, and what is listed never
depends on the memo (sources/blobsource.py, index/state.py SavedVersions)."""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path

import pytest

from cairn.index.state import SourceState
from cairn.schemas.config import PdfSourceConfig, WikiSourceConfig
from cairn.sources import blobsource
from cairn.sources.base import FileStat, VersionMemo
from cairn.sources.pdf import PdfSource
from cairn.sources.wiki import WikiSource


@pytest.fixture
def settled(monkeypatch):
    """Files written by the test count as settled at once (the racy-file rule has its own test)."""
    monkeypatch.setattr(blobsource, "SETTLE_NS", 0)


@pytest.fixture
def wiki(tmp_path) -> Path:
    root = tmp_path / "wiki"
    (root / "team").mkdir(parents=True)
    (root / "a.md").write_text("# A\n\nalpha\n")
    (root / "team" / "b.md").write_text("# B\n\nbravo\n")
    (root / "team" / "c.md").write_text("# C\n\ncharlie\n")
    return root


def wiki_source(root: Path, memo: VersionMemo | None = None) -> WikiSource:
    return WikiSource(WikiSourceConfig(name="w", type="wiki", path=str(root), tenant="t", acl=["g"]), memo=memo)


def discover(source: WikiSource | PdfSource, reads: Counter[str]) -> list:
    """The source's discovery, every file it reads (whole, or as a local path: a PDF) counted in `reads`."""
    fetch, local_path = source.store.fetch, source.store.local_path

    def counted_fetch(key: str, limit: int | None = None):
        reads[key] += 1
        return fetch(key, limit)

    def counted_local_path(key: str):
        reads[key] += 1
        return local_path(key)

    source.store.fetch = counted_fetch  # type: ignore[method-assign]
    source.store.local_path = counted_local_path  # type: ignore[method-assign]
    return list(source.discover())


def discover_with_state(state_path: Path, source_of, reads: Counter[str]) -> list:
    """One discovery as the flow makes it: the memo loaded from the state file, saved once discovery ended."""
    state = SourceState(state_path)
    try:
        memo = state.versions("w")
        found = discover(source_of(memo), reads)
        memo.save()
        return found
    finally:
        state.close()


def test_a_second_discovery_reads_no_unchanged_file(wiki, tmp_path, settled):
    first, second = Counter[str](), Counter[str]()
    refs = discover_with_state(tmp_path / "state.sqlite", lambda memo: wiki_source(wiki, memo), first)
    again = discover_with_state(tmp_path / "state.sqlite", lambda memo: wiki_source(wiki, memo), second)
    assert first == {"a.md": 1, "team/b.md": 1, "team/c.md": 1}
    assert second == {}
    assert again == refs


def test_only_the_files_whose_stat_moved_are_read_again(wiki, tmp_path, settled):
    discover_with_state(tmp_path / "state.sqlite", lambda memo: wiki_source(wiki, memo), Counter())
    (wiki / "team" / "b.md").write_text("# B\n\nbravo, edited and longer\n")
    (wiki / "d.md").write_text("# D\n\ndelta\n")
    reads = Counter[str]()
    discover_with_state(tmp_path / "state.sqlite", lambda memo: wiki_source(wiki, memo), reads)
    assert reads == {"team/b.md": 1, "d.md": 1}


def test_an_edit_that_keeps_size_and_mtime_is_still_read_because_ctime_moved(wiki, tmp_path, settled):
    page = wiki / "a.md"
    before = page.stat()
    refs = discover_with_state(tmp_path / "state.sqlite", lambda memo: wiki_source(wiki, memo), Counter())
    while page.stat().st_ctime_ns == before.st_ctime_ns:  # until the clock has ticked past the first write
        page.write_text("# A\n\nALPHA\n")  # same length
        os.utime(page, ns=(before.st_atime_ns, before.st_mtime_ns))  # the mtime set back, as a tool can
        time.sleep(0.001)
    after = page.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    reads = Counter[str]()
    edited = discover_with_state(tmp_path / "state.sqlite", lambda memo: wiki_source(wiki, memo), reads)
    assert reads == {"a.md": 1}
    assert edited[0].version_hash != refs[0].version_hash
    assert edited[0].version_hash == list(wiki_source(wiki).discover())[0].version_hash


def test_a_deleted_files_entry_is_dropped(wiki, tmp_path, settled):
    page = wiki / "team" / "c.md"
    stat = page.stat()
    seen = FileStat(stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)
    discover_with_state(tmp_path / "state.sqlite", lambda memo: wiki_source(wiki, memo), Counter())
    state = SourceState(tmp_path / "state.sqlite")
    assert state.versions("w").get("team/c.md", seen) is not None
    page.unlink()
    discover_with_state(tmp_path / "state.sqlite", lambda memo: wiki_source(wiki, memo), Counter())
    assert state.versions("w").get("team/c.md", seen) is None
    assert state._db.execute("select path from file_version order by path").fetchall() == [("a.md",), ("team/b.md",)]
    state.close()


def test_ids_and_versions_are_the_same_with_and_without_the_memo(wiki, tmp_path, settled):
    (wiki / "contract.pdf").write_bytes(b"%PDF-1.4 not parsed by discovery\n")
    pdf_config = PdfSourceConfig(name="w", type="pdf", path=str(wiki), tenant="t", acl=["g"])
    for source_of in (lambda memo: wiki_source(wiki, memo), lambda memo: PdfSource(pdf_config, memo=memo)):
        without = list(source_of(None).discover())
        state_path = tmp_path / f"{type(source_of(None)).__name__}.sqlite"
        reads = Counter[str]()
        assert discover_with_state(state_path, source_of, reads) == without
        assert reads  # the first discovery read the files
        reads.clear()
        assert discover_with_state(state_path, source_of, reads) == without  # from the memo this time
        assert reads == {}


def test_a_file_changed_moments_before_discovery_is_read_again_next_time(wiki, tmp_path):
    """A file whose ctime is within SETTLE_NS of its read is not remembered: a second write in the same
    timestamp tick could leave its stat unchanged (git's racy entries)."""
    discover_with_state(tmp_path / "state.sqlite", lambda memo: wiki_source(wiki, memo), Counter())
    reads = Counter[str]()
    discover_with_state(tmp_path / "state.sqlite", lambda memo: wiki_source(wiki, memo), reads)
    assert reads == {"a.md": 1, "team/b.md": 1, "team/c.md": 1}


def test_a_generation_keeps_its_own_memo_until_it_is_adopted(tmp_path):
    stat = FileStat(1, 2, 3, 4)
    serving, build = SourceState(tmp_path / "s.sqlite"), SourceState(tmp_path / "s.sqlite", scope="cairn__g2")
    memo = build.versions("w")
    memo.put("a.md", stat, "v2")
    memo.save()
    assert serving.versions("w").get("a.md", stat) is None
    serving.adopt("cairn__g2")
    assert serving.versions("w").get("a.md", stat) == "v2"
    assert build.versions("w").get("a.md", stat) is None
    build.forget("cairn__g2")
    serving.close()
    build.close()


def test_two_indexes_sharing_a_state_file_keep_their_own_memos(wiki, tmp_path, settled):
    """Two configurations with a source of one name (each its own folder, each its own index) and the default
    state file: each index's discovery remembers its own files, never dropping the other's."""
    other = tmp_path / "other-wiki"
    other.mkdir()
    (other / "z.md").write_text("# Z\n\nzulu\n")
    state_path = tmp_path / "state.sqlite"

    def discover_as(index: str, root: Path, reads: Counter[str]) -> None:
        state = SourceState(state_path, index)
        try:
            memo = state.versions("w")
            discover(wiki_source(root, memo), reads)
            memo.save()
        finally:
            state.close()

    for _ in range(2):  # both indexes listed once: from now on, each remembers its own files
        discover_as("/srv/a/cairn.db\0cairn", wiki, Counter())
        discover_as("/srv/b/cairn.db\0cairn", other, Counter())
    first, second = Counter[str](), Counter[str]()
    discover_as("/srv/a/cairn.db\0cairn", wiki, first)
    discover_as("/srv/b/cairn.db\0cairn", other, second)
    assert first == {} and second == {}
