import pytest

from cairn.schemas.config import ConfigError, load_config, parse_config
from tests.conftest import REPO


def test_default_config_names_the_sample_sources():
    config = load_config("data/cairn.toml")
    assert config.milvus.uri == str(REPO / "data" / "index" / "cairn.db") and config.milvus.is_lite
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


def test_a_backend_the_embedding_model_does_not_run_with_is_refused_at_load():
    with pytest.raises(
        ConfigError,
        match="embedding.backend: the embedding model bge-small-en-v1.5 runs with backend onnx-int8, not 'torch'",
    ):
        parse_config({"embedding": {"model": "bge-small-en-v1.5", "backend": "torch"}})
    assert parse_config({"embedding": {"model": "all-MiniLM-L6-v2", "backend": "torch"}}).embedding.backend == "torch"


def test_the_backends_the_config_allows_are_those_the_encoder_runs():
    from cairn.embedding.model import MODELS
    from cairn.schemas.config import MODEL_BACKENDS, EmbeddingConfig

    assert {name: spec.backends for name, spec in MODELS.items()} == MODEL_BACKENDS
    assert set(MODEL_BACKENDS) == set(EmbeddingConfig.model_fields["model"].annotation.__args__)


@pytest.mark.parametrize("uri", ["http://bucket/reports", "s3://", "s3:///reports"])
def test_a_report_uri_that_names_no_bucket_is_refused_at_load(uri):
    with pytest.raises(ConfigError, match=f"quality.report_uri: '{uri}' must look like s3://bucket/prefix"):
        parse_config({"quality": {"report_uri": uri}})
    assert parse_config({"quality": {"report_uri": "s3://bucket/reports"}}).quality.report_uri == "s3://bucket/reports"


def test_a_quality_override_of_an_unknown_band_is_refused_with_a_suggestion():
    with pytest.raises(
        ConfigError,
        match="quality.overrides: incident: unknown band 'parent_min_token' "
        r"\(did you mean 'parent_min_tokens'\?\)",
    ):
        parse_config({"quality": {"overrides": {"incident": {"parent_min_token": 150}}}})
    with pytest.raises(ConfigError, match="unknown band 'colour'; known: parent_min_tokens, "):
        parse_config({"quality": {"overrides": {"incident": {"colour": 1}}}})


@pytest.mark.parametrize(
    ("quality", "message"),
    [
        ({"overrides": {"incident": {"parent_min_tokens": 950}}}, r"quality.overrides.incident: need 0 < parent_min"),
        ({"parent_min_tokens": 500, "parent_max_tokens": 450}, r"quality: need 0 < parent_min_tokens <= parent_max"),
        ({"overrides": {"w.incident": {"child_max_tokens": 50}}}, r"overrides.w.incident: need 0 < child_min_tokens"),
        ({"overrides": {"runbook": {"health_min": 1.5}}}, r"health_min is a chunk health score, in \[0, 1\]"),
        ({"parent_mostly": 0}, r"quality: parent_mostly is a share of the rows, in \(0, 1\]"),
    ],
)
def test_bands_no_row_could_meet_are_refused_as_the_checks_would_resolve_them(quality, message):
    """A floor over its ceiling (with the chunking band it falls back on), a share of none: every row would fail."""
    with pytest.raises(ConfigError, match=message):
        parse_config({"quality": quality})
    narrower = parse_config({"quality": {"overrides": {"incident": {"parent_min_tokens": 150, "health_min": 0.4}}}})
    assert narrower.quality.overrides["incident"]["parent_min_tokens"] == 150


def test_the_bands_an_override_may_narrow_are_those_the_checks_read():
    from cairn.quality.expectations import bands
    from cairn.schemas.config import QUALITY_BANDS, CairnConfig

    assert set(bands(CairnConfig(), "wiki", "runbook")) == set(QUALITY_BANDS)


def test_every_key_of_the_configuration_reference_says_what_it_means():
    # a key's meaning is the comment on its own line or its Field description: a formatter that wraps a long
    # comment away from its key would leave the reference's cell empty
    from cairn.schemas.reference import render

    keys = [line for line in render().splitlines() if line.startswith("| `")]
    assert len(keys) > 100
    assert [line for line in keys if line.endswith("|  |")] == []


def test_the_query_table_is_offered_with_every_other_table():
    from cairn.schemas import config, query_config

    assert config.QueryConfig is query_config.QueryConfig and config.QUERY_STEPS is query_config.QUERY_STEPS
    assert config.CairnConfig().query.enabled("floors") is True
    assert all(hasattr(config, name) for name in config.__all__)


def test_a_config_that_is_not_utf8_or_not_a_file_is_one_error_naming_it(tmp_path):
    latin = tmp_path / "latin.toml"
    latin.write_bytes('[milvus]\ncollection = "caf\xe9"\n'.encode("latin-1"))
    with pytest.raises(ConfigError, match=r"latin.toml is not UTF-8 text \(byte 26: b'\\xe9'\): save it as UTF-8"):
        load_config(latin)
    with pytest.raises(ConfigError, match=r"config file .* cannot be read: Is a directory"):
        load_config(tmp_path)


def test_cairns_files_never_land_on_the_config_or_inside_a_folder_a_source_reads(tmp_path):
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    source = f'[[sources]]\nname = "w"\ntype = "wiki"\npath = "{wiki}"\ntenant = "acme"\nacl = ["sre"]\n'
    config = tmp_path / "cairn.toml"
    config.write_text(f'state_path = "{config}"\n' + source)
    with pytest.raises(ConfigError, match=r"cairn.toml: state_path '.*cairn.toml' is the configuration file itself"):
        load_config(config)
    config.write_text(f'[embedding]\ncache_path = "{wiki}/cache/e.sqlite"\n' + source)
    with pytest.raises(ConfigError, match=r"\[embedding\] cache_path .* is inside the folder source 'w' reads"):
        load_config(config)
    config.write_text(f'state_path = "{tmp_path}/index/state.sqlite"\n' + source)
    assert load_config(config).state_path == f"{tmp_path}/index/state.sqlite"
    git = f'[[sources]]\nname = "g"\ntype = "git"\npath = "{tmp_path}"\ntenant = "acme"\nacl = ["sre"]\n'
    config.write_text(f'state_path = "{tmp_path}/data/index/state.sqlite"\n' + git)  # Cairn run in its repository
    assert load_config(config).sources[0].name == "g"
