import pytest

from cairn.schemas.config import ConfigError, load_config, parse_config


def test_default_config_names_the_sample_sources():
    config = load_config("data/cairn.toml")
    assert config.milvus.uri == "data/index/cairn.db" and config.milvus.is_lite
    assert {s.type for s in config.sources} == {"wiki", "pagerduty", "git", "pdf"}
    assert all(s.tenant and s.acl for s in config.sources)


def test_missing_file_says_how_to_point_at_one(tmp_path):
    with pytest.raises(ConfigError, match="--config PATH or set CAIRN_CONFIG"):
        load_config(tmp_path / "nope.toml")


def test_config_path_from_environment(tmp_path, monkeypatch):
    path = tmp_path / "c.toml"
    path.write_text('[milvus]\ncollection = "from_env"\n')
    monkeypatch.setenv("CAIRN_CONFIG", str(path))
    assert load_config().milvus.collection == "from_env"


def test_milvus_uri_overridden_by_environment(monkeypatch):
    monkeypatch.setenv("CAIRN_MILVUS_URI", "http://milvus.internal:19530")
    config = parse_config({"milvus": {"uri": "x.db"}})
    assert config.milvus.uri == "http://milvus.internal:19530" and not config.milvus.is_lite


def test_token_in_file_is_refused():
    with pytest.raises(ConfigError, match="must not be written in the file"):
        parse_config({"milvus": {"token": "secret"}})


def test_unknown_key_and_bad_type_are_named():
    with pytest.raises(ConfigError, match=r"milvus\.colection"):
        parse_config({"milvus": {"colection": "x"}})
    with pytest.raises(ConfigError, match=r"sources\.0\.type"):
        parse_config({"sources": [{"name": "a", "type": "ftp", "tenant": "t"}]})


def test_chunk_sizes_must_be_ordered():
    with pytest.raises(ConfigError, match="parent_min_tokens <= parent_target_tokens"):
        parse_config({"chunking": {"parent_min_tokens": 950}})


def test_duplicate_source_names_refused():
    source = {"name": "a", "type": "wiki", "tenant": "t", "path": "x"}
    with pytest.raises(ConfigError, match="repeated: a"):
        parse_config({"sources": [source, source]})


def test_unknown_source_lists_known_ones():
    config = parse_config({"sources": [{"name": "a", "type": "wiki", "tenant": "t", "path": "x"}]})
    with pytest.raises(ConfigError, match="known: a"):
        config.source("b")
