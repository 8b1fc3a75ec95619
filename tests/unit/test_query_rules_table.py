"""docs/retrieval.md's table of the retrieval rules: one row per rule of ../shared/RETRIEVAL_SPECS.md, each with a
status, and every test it names exists (a renamed or deleted test fails here, not in a reader's hands)."""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO, SHARED

ROW = re.compile(r"^\| (\d+)\. [^|]+\| ([^|]*)\| ([^|]*)\| ([^|]*)\|", re.MULTILINE)
TEST = re.compile(r"(?:(unit|integration)/(test_\w+\.py))?::(test_\w+)")


def rows() -> dict[int, tuple[str, str]]:
    text = (REPO / "docs" / "retrieval.md").read_text(encoding="utf-8")
    return {int(m.group(1)): (m.group(2).strip(), m.group(4).strip()) for m in ROW.finditer(text)}


def test_every_rule_of_the_spec_has_a_row_with_its_status():
    if SHARED.is_dir():
        rules = re.findall(r"^(\d+)\. ", (SHARED / "RETRIEVAL_SPECS.md").read_text(encoding="utf-8"), re.MULTILINE)
        assert sorted(rows()) == sorted(int(n) for n in rules)
    else:
        assert sorted(rows()) == list(range(1, 26))
    for number, (status, tests) in rows().items():
        assert status.startswith(("as specified", "deviation", "not applicable")), number
        assert tests, f"rule {number} names no test"


@pytest.mark.parametrize("number", range(1, 26))
def test_every_test_a_rule_names_exists(number):
    _, tests = rows()[number]
    where = None
    for layer, filename, name in TEST.findall(tests):
        if filename:
            where = REPO / "tests" / layer / filename
        assert where is not None and where.is_file(), f"rule {number}: {filename or name}"
        assert re.search(rf"^(?:async )?def {name}\(", where.read_text(encoding="utf-8"), re.MULTILINE), (
            f"rule {number}: {where.name}::{name} does not exist"
        )
