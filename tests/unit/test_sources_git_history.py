"""Which past versions of a git source a run loads (sources/gitlog.py): every version a later commit replaced,
with the commit that ended it, and where keep_history's span starts (after the last run's commit, else
history_depth commits back)."""

from __future__ import annotations

from cairn.sources.gitlog import Commit, past_versions, span_start


def commit(n: int) -> Commit:
    return Commit(f"sha{n}", 1_000 * n, "a", f"commit {n}")


LOG = [
    (commit(0), [("A", "blob-a1", "a.md", "a.md"), ("A", "blob-b1", "b.md", "b.md")]),
    (commit(1), [("M", "blob-a2", "a.md", "a.md")]),
    (commit(2), [("R", "blob-b1", "b.md", "c.md")]),  # b.md renamed: its version ends, c.md begins
    (commit(3), [("M", "blob-a3", "a.md", "a.md"), ("D", "", "c.md", "")]),
]


def test_every_replaced_version_is_past_with_the_commit_that_ended_it():
    past = [
        (p.version.path, p.version.blob, p.version.commit.sha, p.version.end, p.ended_by) for p in past_versions(LOG)
    ]
    assert past == [
        ("a.md", "blob-a1", "sha0", 1_000, 1),
        ("b.md", "blob-b1", "sha0", 2_000, 2),
        ("a.md", "blob-a2", "sha1", 3_000, 3),
        ("c.md", "blob-b1", "sha2", 3_000, 3),
    ]


def test_a_first_run_starts_history_depth_commits_back_and_a_later_run_after_its_last_commit():
    commits = [c for c, _ in LOG]
    assert span_start(commits, None, depth=2) == 2  # commits 2 and 3: versions they replaced are loaded
    assert span_start(commits, None, depth=20) == 0  # a shorter log: all of it
    assert span_start(commits, None, depth=0) == 4  # none
    assert span_start(commits, "sha1", depth=20) == 2  # the last run saw sha1: only what came after
    assert span_start(commits, "sha3", depth=20) == 4  # nothing new
    assert span_start(commits, "rewritten-away", depth=2) == 2  # a cursor no longer on the line: as a first run


def test_a_span_loads_what_was_valid_in_it_including_versions_written_before_it():
    start = span_start([c for c, _ in LOG], "sha1", depth=20)
    loaded = [(p.version.path, p.version.blob) for p in past_versions(LOG) if p.ended_by >= start]
    # b.md (written before the span, valid into it), a.md's second version and c.md: not a.md's first
    assert loaded == [("b.md", "blob-b1"), ("a.md", "blob-a2"), ("c.md", "blob-b1")]
