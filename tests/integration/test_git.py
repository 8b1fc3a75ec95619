"""The git source against real repositories made by the tests: discovery at a ref, bad input, history,
incremental runs through the flow (edit, rename, delete), bundle input, and as-of answers from history."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime

import pytest

from cairn.flows.ingest import backfill_flow, ingest_flow
from cairn.index.store import MilvusStore
from cairn.schemas import ContentType
from cairn.schemas.config import GitSourceConfig, load_config
from cairn.schemas.records import parse_day
from cairn.sources import DiscoveryFailure, DocumentError, SourceError
from cairn.sources.git import GitSource
from tests.conftest import REPO, write_config
from tests.git_repo import Repo

RESTART_V1 = """# Restart the billing worker

The billing worker consumes the invoices queue. {filler}

## Steps

1. Announce the restart in the billing channel.
2. Run the rollout restart of the deployment and wait for every replica.
"""
RESTART_V2 = RESTART_V1.replace(
    "1. Announce", "1. Pause the invoices queue with the drain script.\n2. Announce"
).replace("2. Run", "3. Run")
FILLER = " ".join(
    f"Sentence {n} explains how the worker renders invoices, commits them and acknowledges messages." for n in range(40)
)
TERRAFORM = (
    'resource "aws_sqs_queue" "invoices" {\n  name = "invoices"\n}\n\nvariable "region" {\n  default = "eu-west-1"\n}\n'
)


def epoch(day: str) -> int:
    return parse_day(day)


@pytest.fixture
def repo(tmp_path) -> Repo:
    """Three commits: the first adds four files, the second edits, the third adds a CONTRIBUTING file."""
    repo = Repo(tmp_path / "infra")
    repo.write("runbooks/restart.md", RESTART_V1.format(filler=FILLER))
    repo.write("runbooks/credentials.md", "# Rotate credentials\n\n" + FILLER + "\n")
    repo.write("runbooks/vpn.md", "# Legacy VPN\n\n" + FILLER.replace("worker", "VPN server") + "\n")
    repo.write("terraform/main.tf", TERRAFORM)
    repo.write("k8s/app.yaml", "kind: Deployment\nmetadata:\n  name: billing\nspec:\n  replicas: 3\n")
    repo.commit("initial", "2025-01-10T09:00:00+00:00")
    return repo


def source(repo_path, tmp_path, **extra) -> GitSource:
    config = GitSourceConfig(
        name="infra",
        type="git",
        tenant="acme",
        acl=["sre"],
        repo=str(repo_path),
        cache_dir=str(tmp_path / "git-cache"),
        **extra,
    )
    return GitSource(config, extra.pop("cursor", {}))


def test_discovery_lists_the_tree_at_the_ref_with_blob_versions(repo, tmp_path):
    repo.write("notes/binary.md", b"\x89PNG\x00\x01\x02 not text")
    repo.write("runbooks/huge.md", "# Huge\n\n" + "word " * 5000)
    repo.write("tools/cleanup.py", "def main():\n    pass\n")
    repo.write("logo.png", b"\x89PNG\x00")  # not included by the globs: not a document at all
    head = repo.commit("more", "2025-02-01T09:00:00+00:00")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{head},vendor/lib.md")  # a submodule entry
    repo.git("commit", "--quiet", "-m", "submodule", date="2025-02-02T09:00:00+00:00")
    head = repo.git("rev-parse", "HEAD")
    git = source(repo.root, tmp_path, max_file_bytes=10_000)
    found = list(git.discover())
    refs = {r.locator: r for r in found if not isinstance(r, DiscoveryFailure)}
    failures = {f.locator: f.reason for f in found if isinstance(f, DiscoveryFailure)}
    assert set(refs) == {
        "runbooks/restart.md",
        "runbooks/credentials.md",
        "runbooks/vpn.md",
        "terraform/main.tf",
        "k8s/app.yaml",
        "notes/binary.md",
        "tools/cleanup.py",
    }
    assert refs["terraform/main.tf"].version_hash == repo.git("rev-parse", "HEAD:terraform/main.tf")
    assert "submodule" in failures["vendor/lib.md"] and "max_file_bytes" in failures["runbooks/huge.md"]
    with pytest.raises(DocumentError, match="binary"):
        git.load(refs["notes/binary.md"])
    doc = git.load(refs["runbooks/restart.md"])
    assert doc.title == "Restart the billing worker" and doc.content_type == ContentType.RUNBOOK
    assert doc.updated_at == doc.temporal_start == epoch("2025-01-10T09:00:00+00:00")  # last commit touching it
    assert doc.extra["author"] == "Test Author" and doc.extra["commit"] != head
    assert doc.source_uri.endswith(f"@{doc.extra['commit']}/runbooks/restart.md")
    kinds = {r: git.load(refs[r]).content_type for r in ("terraform/main.tf", "k8s/app.yaml", "tools/cleanup.py")}
    assert kinds == {
        "terraform/main.tf": ContentType.TERRAFORM,
        "k8s/app.yaml": ContentType.YAML,
        "tools/cleanup.py": ContentType.CODE,
    }
    assert git.cursor() == {"commit": head}


def test_a_cursor_is_an_ancestor_of_the_head_only_when_it_is_on_its_line(repo, tmp_path):
    """What bounds the `git log` that dates documents (merge-base, under the mirror's time limit like every git
    command): a commit on the line is; one the mirror never had, or not a commit id, is not (a first run's span)."""
    first = repo.git("rev-parse", "HEAD")
    repo.write("runbooks/new.md", "# New\n\n" + FILLER + "\n")
    repo.commit("more", "2025-02-01T09:00:00+00:00")
    git = source(repo.root, tmp_path)
    list(git.discover())  # the mirror cloned, the head read
    assert git._is_ancestor(first) and git._is_ancestor(git.head().sha)
    assert not git._is_ancestor("f" * 40) and not git._is_ancestor("not-a-sha") and not git._is_ancestor(None)


def test_bad_repositories_and_refs_say_what_is_wrong(repo, tmp_path):
    with pytest.raises(SourceError, match=r"ref 'nope' not found .*branches: main"):
        source(repo.root, tmp_path, ref="nope").head()
    broken = tmp_path / "broken.bundle"
    broken.write_bytes(b"# v2 git bundle\nnot a bundle at all\n")
    with pytest.raises(SourceError, match="cannot read the bundle .*broken.bundle"):
        source(broken, tmp_path / "b").head()
    with pytest.raises(SourceError, match="127.0.0.1:9/none.git"):
        source("http://127.0.0.1:9/none.git", tmp_path / "c").head()
    with pytest.raises(SourceError, match="does not exist"):
        source(tmp_path / "missing", tmp_path / "d").head()


def test_a_broken_ref_elsewhere_in_the_repository_does_not_stop_the_source(repo, tmp_path):
    """A branch pointing to an object the repository does not have: the first run (clone) and every later run
    (fetch) still read the source's own ref; the broken ref itself, asked for, is named as such."""
    (repo.root / ".git" / "refs" / "heads" / "broken").write_text("0123456789abcdef0123456789abcdef01234567\n")
    first = [r.locator for r in source(repo.root, tmp_path).discover()]
    assert "runbooks/restart.md" in first
    repo.write("runbooks/new.md", "# New\n\n" + FILLER + "\n")
    repo.commit("new runbook", "2025-02-01T09:00:00+00:00")
    later = source(repo.root, tmp_path)  # the mirror exists: a fetch, which the remote's broken ref fails
    assert [r.locator for r in later.discover()] == sorted([*first, "runbooks/new.md"])
    with pytest.raises(SourceError, match=r"ref 'broken' .*refs/heads/broken.*not our ref"):
        source(repo.root, tmp_path, ref="broken").head()
    with pytest.raises(SourceError, match=r"ref 'broken' not found .*missing objects: refs/heads/broken"):
        source(repo.root, tmp_path / "fresh", ref="broken").head()


def test_history_yields_past_versions_with_their_validity(repo, tmp_path):
    repo.write("runbooks/restart.md", RESTART_V2.format(filler=FILLER))
    repo.commit("drain first", "2025-03-04T10:00:00+00:00")
    repo.git("mv", "runbooks/credentials.md", "runbooks/rotate-credentials.md")
    repo.commit("rename", "2025-04-15T10:00:00+00:00")
    repo.git("rm", "--quiet", "runbooks/vpn.md")
    repo.commit("remove the VPN runbook", "2025-06-02T10:00:00+00:00")
    git = source(repo.root, tmp_path)
    past = {ref.locator.split("@")[0]: git.load(ref) for ref in git.history(None, None)}
    assert set(past) == {"runbooks/restart.md", "runbooks/credentials.md", "runbooks/vpn.md"}
    assert all(not d.is_current for d in past.values())
    assert (past["runbooks/restart.md"].temporal_start, past["runbooks/restart.md"].temporal_end) == (
        epoch("2025-01-10T09:00:00+00:00"),
        epoch("2025-03-04T10:00:00+00:00"),
    )
    assert "Pause the invoices queue" not in past["runbooks/restart.md"].content
    assert past["runbooks/credentials.md"].temporal_end == epoch("2025-04-15T10:00:00+00:00")
    assert past["runbooks/vpn.md"].temporal_end == epoch("2025-06-02T10:00:00+00:00")

    def window(since, until=None):
        return sorted(r.locator.split("@")[0] for r in git.history(since, until))

    may = datetime(2025, 5, 1, tzinfo=UTC)
    assert window(may) == ["runbooks/vpn.md"]  # the only past version still valid in May
    assert window(datetime(2025, 3, 10, tzinfo=UTC), may) == ["runbooks/credentials.md", "runbooks/vpn.md"]
    assert len(list(git.history(None, None, limit=3))) == 0  # the last three commits wrote only current versions
    assert len(list(git.history(None, None, limit=4))) == 3


def rows(config_path) -> list[dict]:
    config = load_config(config_path)
    store = MilvusStore(config.milvus, dim=384)
    store.ensure_collection()
    try:
        return list(
            store.iterate("", ["locator", "is_current", "version_hash", "text", "temporal_start", "temporal_end"])
        )
    finally:
        store.close()


def git_config(tmp_path, repo_path, name="index", **extra):
    return write_config(
        tmp_path / f"{name}.toml",
        tmp_path / name,
        [
            {
                "name": "infra",
                "type": "git",
                "repo": str(repo_path),
                "tenant": "acme",
                "acl": ["sre"],
                "cache_dir": str(tmp_path / name / "git"),
                **extra,
            }
        ],
    )


@pytest.mark.core
def test_incremental_runs_touch_only_changed_paths_and_renames_leave_no_stale_rows(repo, tmp_path, prefect_server):
    config = git_config(tmp_path, repo.root)
    first = ingest_flow(config_path=str(config))
    assert first["documents"]["indexed"] == 5 and not first["failures"]
    repo.write("runbooks/restart.md", RESTART_V2.format(filler=FILLER))
    repo.git("mv", "runbooks/credentials.md", "runbooks/rotate-credentials.md")
    repo.git("rm", "--quiet", "runbooks/vpn.md")
    repo.commit("edit, rename, delete", "2025-03-04T10:00:00+00:00")
    second = ingest_flow(config_path=str(config))["documents"]
    assert (second["indexed"], second["deleted"], second["unchanged"]) == (2, 2, 2)
    locators = {r.locator for r in rows(config)}
    assert locators == {"runbooks/restart.md", "runbooks/rotate-credentials.md", "terraform/main.tf", "k8s/app.yaml"}
    assert any("Pause the invoices queue" in r.text for r in rows(config))
    assert ingest_flow(config_path=str(config))["documents"]["indexed"] == 0

    # the same repository as a bundle gives the same documents
    bundle = repo.bundle(tmp_path / "infra.bundle")
    from_bundle = ingest_flow(config_path=str(git_config(tmp_path, bundle, name="bundle")))
    assert from_bundle["documents"]["indexed"] == 4 and not from_bundle["failures"]


def test_history_backfill_answers_as_of_a_past_day(repo, tmp_path, prefect_server):
    from cairn.query import Principal, Retriever

    repo.write("runbooks/restart.md", RESTART_V2.format(filler=FILLER))
    repo.commit("drain first", "2025-03-04T10:00:00+00:00")
    config = git_config(tmp_path, repo.root, keep_history=True, history_depth=0)  # no history without the backfill
    assert ingest_flow(config_path=str(config))["documents"]["indexed"] == 5
    report = backfill_flow(config_path=str(config), source="infra", commits=2)
    assert report["documents"]["indexed"] == 6 and not report["failures"]  # 5 current + the runbook's past version
    retriever = Retriever.from_config(config)
    try:
        who, question = Principal("acme", ["sre"]), "steps to restart the billing worker"
        now = " ".join(h.text for h in retriever.retrieve(question, who, k=3).hits)
        then = " ".join(h.text for h in retriever.retrieve(question, who, k=3, as_of=epoch("2025-02-01")).hits)
    finally:
        retriever.close()
    assert "Pause the invoices queue" in now
    assert "Announce the restart" in then and "Pause the invoices queue" not in then


def as_of(config, day: str | None) -> str:
    from cairn.query import Principal, Retriever

    retriever = Retriever.from_config(config)
    try:
        when = epoch(day) if day else None
        return " ".join(
            h.text
            for h in retriever.retrieve(
                "steps to restart the billing worker", Principal("acme", ["sre"]), k=3, as_of=when
            ).hits
        )
    finally:
        retriever.close()


def test_keep_history_loads_past_versions_on_the_first_run_and_only_new_ones_after(repo, tmp_path, prefect_server):
    """No backfill: the first run of a keep_history source loads what its last history_depth commits replaced,
    so as-of questions answer from there; a later run adds the versions its new commits replaced, no more."""
    repo.write("runbooks/restart.md", RESTART_V2.format(filler=FILLER))
    repo.commit("drain first", "2025-03-04T10:00:00+00:00")
    config = git_config(tmp_path, repo.root, keep_history=True)
    first = ingest_flow(config_path=str(config))
    assert first["documents"]["indexed"] == 6 and not first["failures"]  # 5 current + the runbook's first version
    assert (first["documents"]["seen"], first["documents"]["history_versions"]) == (5, 1)
    then = as_of(config, "2025-02-01")
    assert "Announce the restart" in then and "Pause the invoices queue" not in then
    assert "Pause the invoices queue" in as_of(config, None)

    repo.write("runbooks/restart.md", RESTART_V2.format(filler=FILLER) + "\n## Verify\n\nWatch the queue drain.\n")
    repo.commit("verify step", "2025-05-06T10:00:00+00:00")
    second = ingest_flow(config_path=str(config))
    assert second["documents"]["indexed"] == 2  # the runbook now, and the version the new commit replaced
    assert (second["documents"]["seen"], second["documents"]["history_versions"]) == (5, 1)
    march = as_of(config, "2025-04-01")
    assert "Pause the invoices queue" in march and "Watch the queue drain" not in march
    past = sorted((r.temporal_start, r.temporal_end) for r in rows(config) if not r.is_current)
    assert {
        (epoch("2025-01-10T09:00:00+00:00"), epoch("2025-03-04T10:00:00+00:00")),
        (epoch("2025-03-04T10:00:00+00:00"), epoch("2025-05-06T10:00:00+00:00")),
    } == set(past)


def test_a_keep_history_cursor_holds_beside_past_versions_of_files_deleted_since(repo, tmp_path, prefect_server):
    """A past version of a file deleted since is no document the collection serves: the cursor saved beside it
    holds on the next run, which loads only what its new commits replaced (the cursor counted the deleted file,
    was dropped as if the collection had lost documents, and every run re-listed the source and wrote every past
    version again)."""
    repo.git("rm", "--quiet", "runbooks/vpn.md")
    repo.commit("retire the vpn", "2025-02-01T10:00:00+00:00")
    config = git_config(tmp_path, repo.root, keep_history=True)
    first = ingest_flow(config_path=str(config))
    assert (first["documents"]["seen"], first["documents"]["history_versions"]) == (4, 1)  # the vpn runbook, past

    repo.write("runbooks/restart.md", RESTART_V2.format(filler=FILLER))
    repo.commit("drain first", "2025-03-04T10:00:00+00:00")
    second = ingest_flow(config_path=str(config))
    assert second["documents"]["history_versions"] == 1  # the runbook's first version; not the vpn's again
    assert second["documents"]["indexed"] == 2 and not second["failures"]


def test_the_sample_bundle_is_built_from_the_files_in_data(tmp_path):
    from scripts.make_sample_repo import BUNDLE, build

    rebuilt = build(tmp_path / "infra.bundle")
    heads = [
        subprocess.run(["git", "bundle", "list-heads", str(b)], capture_output=True, text=True, check=True).stdout
        for b in (rebuilt, BUNDLE)
    ]
    assert heads[0] == heads[1], "data/git/infra.bundle is stale: run scripts/make_sample_repo.py"
    assert BUNDLE.is_relative_to(REPO)


def test_a_second_index_sharing_the_state_file_gets_every_file_not_the_first_ones_changes(
    repo, tmp_path, prefect_server
):
    first = git_config(tmp_path, repo.root)
    assert ingest_flow(config_path=str(first))["documents"]["indexed"] == 5
    repo.write("runbooks/restart.md", RESTART_V2.format(filler=FILLER))
    repo.commit("edit", "2025-03-04T10:00:00+00:00")
    assert ingest_flow(config_path=str(first))["documents"]["indexed"] == 1  # the first index's cursor, used
    second = git_config(tmp_path, repo.root, name="second")
    lines = second.read_text().splitlines()
    shared = next(line for line in first.read_text().splitlines() if line.startswith("state_path"))
    second.write_text("\n".join(shared if line.startswith("state_path") else line for line in lines) + "\n")
    report = ingest_flow(config_path=str(second))  # a cursor saved for the first index is not its own
    assert report["documents"]["indexed"] == 5 and len({r.locator for r in rows(second)}) == 5
