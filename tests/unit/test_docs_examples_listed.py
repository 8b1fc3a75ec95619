"""Every fenced block of README.md and docs/*.md is accounted for (tests/docs_examples.py): a bash or python block
runs as printed (tests/integration/test_docs_examples.py) unless a comment above it says why it cannot run here;
a toml block is a configuration that loads; a json block parses; a block without a language is text."""

from __future__ import annotations

import json
import tomllib

import pytest

from cairn.schemas.config import parse_config
from tests.docs_examples import RUN, every_block

BLOCKS = every_block()


def test_every_block_is_run_checked_or_text_and_every_excuse_says_why(capsys):
    kinds = {b.name: b.lang for b in BLOCKS if b.lang not in (*RUN, "toml", "json", "")}
    assert not kinds, f"a block of a language the docs tests neither run nor check: {kinds}"
    excused = {b.name: b.excuse for b in BLOCKS if b.excuse}
    for block in BLOCKS:
        if block.excuse is not None:
            assert block.lang in RUN, f"{block.name}: only a bash or python block needs an excuse"
            assert len(block.excuse.split()) >= 3, f"{block.name}: say why it cannot run here, not just that"
    with capsys.disabled():  # the list a reader of the test log sees (pytest -s): what is not run, and why
        print("\ndocs examples not run here:", *(f"  {name}: {why}" for name, why in excused.items()), sep="\n")


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.lang == "toml"], ids=lambda b: b.name)
def test_a_toml_example_is_a_configuration_that_loads(block, tmp_path):
    parse_config(tomllib.loads(block.code), block.name, base=tmp_path)


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.lang == "json"], ids=lambda b: b.name)
def test_a_json_example_parses(block):
    json.loads(block.code)
