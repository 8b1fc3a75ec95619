"""Document ids are stable across runs and releases: a changed id would re-index every document of every user.
The ids below were computed by the connectors before their id helpers were folded into one; they must never move."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cairn.schemas import SourceType
from cairn.schemas.config import GitSourceConfig, PagerDutySourceConfig, PdfSourceConfig, WikiSourceConfig
from cairn.sources import DiscoveryFailure, document_id
from cairn.sources.git import GitSource
from cairn.sources.pagerduty import PagerDutySource
from cairn.sources.pdf import PdfSource
from cairn.sources.wiki import WikiSource
from tests.git_repo import Repo


def _ids(source) -> dict[str, str]:
    return {found.locator: found.document_id for found in source.discover()}


def _write(root: Path, relative: str, content: bytes) -> None:
    (root / relative).parent.mkdir(parents=True, exist_ok=True)
    (root / relative).write_bytes(content)


def test_wiki_page_ids_are_pinned_and_a_refused_page_keeps_its_id(tmp_path):
    _write(tmp_path, "ops/db.md", b"# Ledger DB\n\nbody\n")
    _write(tmp_path, "café/notes.md", b"# Notes\n\nbody\n")
    _write(tmp_path, "huge.md", b"# Huge\n\n" + b"x" * 2_000)
    wiki = WikiSource(
        WikiSourceConfig(name="wiki", type="wiki", path=str(tmp_path), tenant="acme", acl=["sre"], max_file_bytes=1_000)
    )
    found = list(wiki.discover())
    assert {f.locator: f.document_id for f in found} == {
        "ops/db.md": "935db8326436e2a6630da85e8e367bbd",
        "café/notes.md": "69c56a65f2e848b2fcf3b2770eceb4df",
        "huge.md": "85ee78accf771936d8b2311b38817198",
    }
    assert [f.locator for f in found if isinstance(f, DiscoveryFailure)] == ["huge.md"]


def test_wiki_ids_depend_on_the_source_name(tmp_path):
    _write(tmp_path, "kafka-lag.md", b"# Kafka lag\n\nbody\n")
    wiki = WikiSource(WikiSourceConfig(name="acme-wiki", type="wiki", path=str(tmp_path), tenant="acme", acl=["sre"]))
    assert _ids(wiki) == {"kafka-lag.md": "f58aa5a203893ba99b000341e1be37f1"}


def test_pdf_ids_are_pinned(tmp_path):
    _write(tmp_path, "a.pdf", b"%PDF-1.4\n% one\n")
    _write(tmp_path, "msa/2024 master.pdf", b"%PDF-1.4\n% two\n")
    pdf = PdfSource(PdfSourceConfig(name="contracts", type="pdf", path=str(tmp_path), tenant="acme", acl=["legal"]))
    assert _ids(pdf) == {
        "a.pdf": "d1db0239a387c44e880fe75f893ad0ba",
        "msa/2024 master.pdf": "b48ccb87508eb9edf0616756b73e93db",
    }


def test_git_file_ids_are_pinned_and_a_past_version_has_its_files_id(tmp_path):
    repo = Repo(tmp_path / "repo")
    repo.write("docs/restart.md", "# Restart\n\nversion one\n")
    repo.write("README.md", "# Runbooks\n\nread me\n")
    repo.commit("first", "2025-01-10T09:00:00+00:00")
    repo.write("docs/restart.md", "# Restart\n\nversion two\n")
    repo.commit("second", "2025-02-10T09:00:00+00:00")
    git = GitSource(
        GitSourceConfig(
            name="runbooks",
            type="git",
            repo=str(repo.root),
            tenant="acme",
            acl=["sre"],
            cache_dir=str(tmp_path / "cache"),
        )
    )
    assert _ids(git) == {
        "README.md": "ac3a79552f22fae2533d0b25a514aef4",
        "docs/restart.md": "92b708c92edd8fd5962ad98ef9b20405",
    }
    [past] = git.history(None, None)
    assert past.locator.startswith("docs/restart.md@") and past.document_id == "92b708c92edd8fd5962ad98ef9b20405"
    assert git.load(past).document_id == past.document_id


def test_pagerduty_incident_ids_are_pinned_and_a_refused_incident_keeps_its_id(tmp_path):
    incidents = [{"id": "PABC123", "title": "t"}, {"id": "Q1ABCDEF", "title": "big"}]
    (tmp_path / "incidents.json").write_text(json.dumps({"incidents": incidents}))
    (tmp_path / "Q1ABCDEF").mkdir()
    (tmp_path / "Q1ABCDEF" / "notes.json").write_text(json.dumps({"notes": [{"content": "x" * 2_000}]}))
    pagerduty = PagerDutySource(
        PagerDutySourceConfig(
            name="incidents", type="pagerduty", path=str(tmp_path), tenant="acme", acl=["sre"], max_incident_bytes=1_000
        )
    )
    found = list(pagerduty.discover())
    assert {f.locator: f.document_id for f in found} == {
        "PABC123": "7b9c97cb2eb157b457f0662713ecf847",
        "Q1ABCDEF": "d16d3c6e91fd5debc3251e109e5a8a4a",
    }
    assert [f.locator for f in found if isinstance(f, DiscoveryFailure)] == ["Q1ABCDEF"]


@pytest.mark.parametrize(
    "kind, source_name, locator, expected",
    [
        (SourceType.WIKI, "acme-wiki", "kafka-lag.md", "f58aa5a203893ba99b000341e1be37f1"),
        (SourceType.PDF, "contracts", "msa/2024 master.pdf", "b48ccb87508eb9edf0616756b73e93db"),
        (SourceType.GIT, "runbooks", "docs/restart.md", "92b708c92edd8fd5962ad98ef9b20405"),
        (SourceType.PAGERDUTY, "pd", "Q1ABCDEF", "1863bbbca9d86d357e2adb7635d9afda"),
    ],
)
def test_the_one_document_id_rule_gives_the_pinned_ids(kind, source_name, locator, expected):
    assert document_id(kind, source_name, locator) == expected
