"""bench.shell_query reads /usr/bin/time's line after whatever the command wrote to stderr."""

from __future__ import annotations

from bench.shell_query import parse_time, summary


def test_the_time_line_is_the_last_and_cpu_is_user_plus_sys():
    assert parse_time("cairn: a warning of the command\n1.42 0.95 0.12\n") == (1.42, 0.95 + 0.12)


def test_medians_of_wall_and_cpu_are_taken_apart():
    assert summary([(3.0, 1.0), (1.0, 2.0), (2.0, 3.0)]) == {"median_wall": 2.0, "median_cpu": 2.0, "runs": 3}
