"""The index says what is true (#50), through the `cairn` command in subprocesses on a Milvus Lite index: a changed
recipe re-chunks and is counted until it has, a source taken out of the configuration is named until it is
dropped, and the commands that read an index say there is none before any ingest, creating nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, write_config, write_page

pytestmark = pytest.mark.slow

SENTENCE = "Drain the {title} queue, restart worker number {n} and confirm that the lag falls below {n}00 messages. "


def cairn(*args: str, config: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}  # the run in this process, no Prefect
    return subprocess.run(
        [sys.executable, "-m", "cairn.cli", "--config", str(config), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,  # not a terminal
        timeout=900,  # a hang guard
        env=env,
    )


def wiki(root: Path, names: tuple[str, ...]) -> None:
    for name in names:
        body = f"# {name.title()}\n\n" + "".join(SENTENCE.format(title=name, n=n) for n in range(60))
        write_page(root, f"{name}.md", body)


def sources(tmp_path: Path, *names: str) -> list[dict]:
    tenants = {"runbooks": "acme", "globex": "globex"}
    return [{"name": n, "type": "wiki", "path": str(tmp_path / n), "tenant": tenants[n], "acl": ["ops"]} for n in names]


def test_a_source_taken_out_of_the_configuration_is_named_until_dropped(tmp_path):
    wiki(tmp_path / "runbooks", ("alpha", "beta"))
    wiki(tmp_path / "globex", ("gamma", "delta", "epsilon"))
    config = write_config(tmp_path / "c.toml", tmp_path / "index", sources(tmp_path, "runbooks", "globex"))
    assert cairn("ingest", config=config).returncode == 0
    write_config(config, tmp_path / "index", sources(tmp_path, "runbooks"))  # globex removed from the file

    ingest = cairn("ingest", config=config)
    assert ingest.returncode == 0
    named = [line for line in ingest.stderr.splitlines() if "globex" in line]
    assert len(named) == 1 and "not in the configuration" in named[0] and "cairn drop --source" in named[0]
    status = cairn("status", "--json", config=config)
    held = {s["source"]: s for s in json.loads(status.stdout)["sources"]}
    assert held["globex"]["configured"] is False and held["globex"]["documents"] == 3
    assert "globex: in the index but not in the configuration" in cairn("status", config=config).stderr
    reconcile = cairn("reconcile", config=config)
    assert reconcile.returncode == 1 and "globex: DRIFT: in the index but not in the configuration" in reconcile.stdout

    refused = cairn("drop", "--source", "globex", config=config)  # stdin is not a terminal, no --yes
    assert refused.returncode == 2
    assert "would remove 3 of its 3 indexed documents (100%): nothing removed" in refused.stderr
    assert "--yes" in refused.stderr
    unknown = cairn("drop", "--source", "nope", "--yes", config=config)
    assert unknown.returncode == 2 and "no rows of a source named 'nope'" in unknown.stderr

    dropped = cairn("drop", "--source", "globex", "--yes", "--json", config=config)
    assert dropped.returncode == 0, dropped.stderr
    assert json.loads(dropped.stdout)["documents"] == 3
    assert cairn("reconcile", config=config).returncode == 0
    after = json.loads(cairn("status", "--json", config=config).stdout)
    assert [s["source"] for s in after["sources"]] == ["runbooks"]
    listed = json.loads(cairn("documents", "--json", config=config).stdout)["documents"]
    assert sorted(d["locator"] for d in listed) == ["alpha.md", "beta.md"]
    assert {(d["recipe"], d["state"]) for d in listed} == {("current", "current")}
    assert "globex" not in cairn("ingest", config=config).stderr


def test_a_narrower_chunking_band_is_counted_as_an_older_recipe_until_the_next_ingest_rechunks(tmp_path):
    wiki(tmp_path / "runbooks", ("alpha", "beta", "gamma"))
    config = write_config(tmp_path / "c.toml", tmp_path / "index", sources(tmp_path, "runbooks"))
    assert cairn("ingest", config=config).returncode == 0
    narrow = "[chunking]\nchild_min_tokens = 60\nchild_target_tokens = 90\nchild_max_tokens = 120\n"
    config.write_text(config.read_text(encoding="utf-8") + narrow, encoding="utf-8")

    before = json.loads(cairn("status", "--json", config=config).stdout)["sources"][0]
    assert before["older_recipe_rows"] == before["current_rows"] > 0
    listed = json.loads(cairn("documents", "--json", config=config).stdout)["documents"]
    assert {d["recipe"] for d in listed} == {"older"}
    report = cairn("report", "--json", config=config)  # the quality checks judge these rows against the new bands
    assert json.loads(report.stdout)["older_recipe_rows"] == before["older_recipe_rows"]
    report = json.loads(cairn("ingest", "--json", config=config).stdout)
    assert (report["documents"]["indexed"], report["documents"]["unchanged"]) == (3, 0)
    assert report["reindexed"] == {"recipe changed": 3}
    after = json.loads(cairn("status", "--json", config=config).stdout)["sources"][0]
    assert after["older_recipe_rows"] == 0
    again = json.loads(cairn("ingest", "--json", config=config).stdout)
    assert again["documents"]["unchanged"] == 3


@pytest.mark.parametrize("command", ["reconcile", "report", "status", "documents"])
def test_before_any_ingest_a_reading_command_says_there_is_no_index_and_creates_nothing(tmp_path, command):
    wiki(tmp_path / "runbooks", ("alpha",))
    config = write_config(tmp_path / "c.toml", tmp_path / "index", sources(tmp_path, "runbooks"))
    done = cairn(command, config=config)
    assert done.returncode == 2
    assert "run `cairn ingest` first" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "index").exists()
