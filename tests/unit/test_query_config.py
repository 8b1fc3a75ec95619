import pytest

from cairn.schemas.config import ConfigError, QueryConfig, parse_config


def test_steps_are_on_by_default_and_switchable():
    config = parse_config({"query": {"steps": {"floors": False}}})
    assert not config.query.enabled("floors") and config.query.enabled("diversity")


def test_an_unknown_step_is_refused_with_the_known_ones():
    with pytest.raises(ConfigError, match="unknown step\\(s\\) flors; known: gate"):
        parse_config({"query": {"steps": {"flors": False}}})


def test_spec_defaults():
    q = QueryConfig()
    assert (q.rrf_k, q.vector_weight, q.keyword_weight, q.combined_floor, q.vector_floor, q.token_budget) == (60, 0.65, 0.35, 0.45, 0.15, 1400)
