import pytest

from cairn.schemas.config import ConfigError, QueryConfig, parse_config


def test_steps_are_on_by_default_and_switchable():
    config = parse_config({"query": {"steps": {"floors": False}}})
    assert not config.query.enabled("floors") and config.query.enabled("diversity")


def test_an_unknown_step_is_refused_with_the_known_ones():
    with pytest.raises(ConfigError, match="unknown step\\(s\\) flors; known: gate"):
        parse_config({"query": {"steps": {"flors": False}}})


def test_the_default_fusion_weights_sum_to_one_and_a_scoped_question_never_meets_a_higher_bar():
    q = QueryConfig()
    assert q.vector_weight + q.keyword_weight == pytest.approx(1.0)  # the combined score stays in [0, 1]
    assert q.vector_weight_scoped + q.keyword_weight_scoped == pytest.approx(1.0)
    assert q.combined_floor_scoped <= q.combined_floor


@pytest.mark.parametrize(
    "spec, message",
    [
        ("no_such_module:hyde", "'no_such_module:hyde' cannot be loaded: ModuleNotFoundError: No module named"),
        ("os.path:no_such_function", "cannot be loaded: AttributeError"),
        ("os.path", "'os.path': expected 'package.module:function'"),
        ("os:sep", "'os:sep' is a str, not a function"),
    ],
)
def test_a_transform_hook_that_cannot_be_called_is_refused_naming_file_and_key_when_the_config_loads(
    tmp_path, spec, message
):
    from cairn.schemas.config import load_config

    path = tmp_path / "cairn.toml"
    path.write_text(f'[query]\ntransform = "{spec}"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    assert str(refused.value).startswith(f"{path}: query.transform: ") and message in str(refused.value)


def test_a_transform_hook_that_imports_is_kept_and_loaded_by_the_query_side():
    from cairn.query.transform import load_transform

    config = parse_config({"query": {"transform": "os.path:basename"}})
    assert config.query.transform == "os.path:basename" and load_transform(config.query.transform)("a/b") == "b"
    assert load_transform("") is None


def test_confidence_lines_out_of_order_are_refused_and_the_defaults_keep_the_specs_order():
    q = QueryConfig()
    assert q.confidence_low < q.confidence_medium < q.confidence_direct < q.confidence_high
    with pytest.raises(ConfigError, match="confidence_low < confidence_medium < confidence_high"):
        parse_config({"query": {"confidence_medium": 0.9}})


def test_an_expansion_weight_of_one_or_more_is_refused_a_neighbour_never_outranks_its_seed():
    with pytest.raises(ConfigError, match="expansion_weight"):
        parse_config({"query": {"expansion_weight": 1.0}})
