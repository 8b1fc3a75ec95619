"""Where Cairn's files go (schemas/paths.py): one [index] dir, each file overridable, paths read against the
configuration file's folder, and configurations written for the working directory still working."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from cairn.schemas.config import load_config, parse_config

GIT = '[[sources]]\nname = "infra"\ntype = "git"\nrepo = "repo.bundle"\ntenant = "t"\nacl = ["a"]\n'
WIKI = '[[sources]]\nname = "w"\ntype = "wiki"\npath = "pages"\ntenant = "t"\nacl = ["a"]\n'


@pytest.fixture
def elsewhere(tmp_path, monkeypatch) -> Path:
    """A working directory that is not the configuration's folder; returns the configuration's folder."""
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    (tmp_path / "conf").mkdir()
    return tmp_path / "conf"


def written(folder: Path, text: str) -> Path:
    path = folder / "cairn.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_every_file_cairn_writes_lives_under_the_index_dir_by_default(elsewhere):
    config = load_config(written(elsewhere, '[index]\ndir = "state"\n' + GIT))
    home = elsewhere / "state"
    assert config.index.dir == str(home)
    assert config.milvus.uri == str(home / "cairn.db")
    assert config.state_path == str(home / "state.sqlite")
    assert config.ledger_folder == home / "ledgers" and config.feedback_file == home / "feedback.sqlite"
    assert config.embedding.cache_path == str(home / "embeddings.sqlite")
    assert config.embedding.onnx_cache == str(home / "models")
    assert config.sources[0].cache_dir == str(home / "git")
    assert config.quality.report_dir == str(home / "reports")


def test_relative_paths_are_read_against_the_configuration_files_folder(elsewhere):
    (elsewhere / "pages").mkdir()
    config = load_config(written(elsewhere, WIKI + GIT))
    assert config.sources[0].path == str(elsewhere / "pages")
    assert config.sources[1].repo == str(elsewhere / "repo.bundle")
    assert config.index.dir == str(elsewhere / "data" / "index")  # the default folder, beside the file


def test_a_lite_uri_set_alone_takes_cursors_cache_mirrors_and_reports_beside_it(elsewhere):
    config = load_config(written(elsewhere, '[milvus]\nuri = "/srv/cairn/cairn.db"\n' + GIT))
    assert config.state_path == "/srv/cairn/state.sqlite"
    assert config.embedding.cache_path == "/srv/cairn/embeddings.sqlite"
    assert config.sources[0].cache_dir == "/srv/cairn/git"
    assert config.quality.report_dir == "/srv/cairn/reports"
    assert not any(Path(p).is_relative_to(Path.cwd()) for p in (config.state_path, config.quality.report_dir))


def test_each_file_keeps_its_own_key(elsewhere):
    text = (
        'state_path = "/var/cairn/cursors.sqlite"\n[index]\ndir = "state"\n'
        '[embedding]\ncache_path = "cache/e.sqlite"\n[quality]\nreport_dir = "/var/cairn/reports"\n'
        + GIT.replace('acl = ["a"]\n', 'acl = ["a"]\ncache_dir = "mirrors"\n')
    )
    config = load_config(written(elsewhere, text))
    assert config.state_path == "/var/cairn/cursors.sqlite"
    assert config.ledger_folder == Path("/var/cairn/ledgers")  # the derived ledgers stay beside the cursors
    assert config.embedding.cache_path == str(elsewhere / "cache" / "e.sqlite")
    assert config.quality.report_dir == "/var/cairn/reports"
    assert config.sources[0].cache_dir == str(elsewhere / "mirrors")
    assert config.milvus.uri == str(elsewhere / "state" / "cairn.db")


def test_a_configuration_written_for_the_working_directory_keeps_working_and_says_so(elsewhere, caplog):
    (Path.cwd() / "pages").mkdir()  # where the old rule found it; nothing of that name beside the file
    (Path.cwd() / "data" / "index").mkdir(parents=True)  # the old default folder, with an index in it
    with caplog.at_level(logging.WARNING, logger="cairn.config"):
        config = load_config(written(elsewhere, WIKI))
    assert config.sources[0].path == str(Path.cwd() / "pages")
    assert config.state_path == str(Path.cwd() / "data" / "index" / "state.sqlite")
    assert "source 'w' path 'pages' is read in the working directory" in caplog.text
    assert "the default [index] dir 'data/index'" in caplog.text


def test_beside_the_file_wins_when_both_readings_name_something(elsewhere, caplog):
    (Path.cwd() / "pages").mkdir()
    (elsewhere / "pages").mkdir()
    with caplog.at_level(logging.WARNING, logger="cairn.config"):
        config = load_config(written(elsewhere, WIKI))
    assert config.sources[0].path == str(elsewhere / "pages") and not caplog.text


def test_urls_are_not_paths(elsewhere):
    config = load_config(written(elsewhere, GIT.replace("repo.bundle", "https://git.example/org/repo.git")))
    assert config.sources[0].repo == "https://git.example/org/repo.git"
    server = load_config(written(elsewhere, '[milvus]\nuri = "http://milvus:19530"\n'))
    assert server.milvus.uri == "http://milvus:19530"
    assert server.state_path == str(elsewhere / "data" / "index" / "state.sqlite")


def test_the_environment_is_read_against_the_working_directory(elsewhere, monkeypatch):
    monkeypatch.setenv("CAIRN_MILVUS_URI", "other/cairn.db")
    config = load_config(written(elsewhere, ""))
    assert config.milvus.uri == str(Path.cwd() / "other" / "cairn.db")
    assert config.state_path == str(Path.cwd() / "other" / "state.sqlite")


def test_a_table_without_a_file_is_read_against_the_working_directory(elsewhere):
    config = parse_config({"state_path": "s.sqlite"})
    assert config.state_path == str(Path.cwd() / "s.sqlite")
    assert config.milvus.uri == str(Path.cwd() / "data" / "index" / "cairn.db")
