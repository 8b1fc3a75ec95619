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
