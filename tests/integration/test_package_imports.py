"""What a fresh interpreter can import (moved from tests/unit/test_package_layout.py: each test starts one): no layer
under its bare name, even from the repository's root, and `cairn.query` without the ingestion stack, as a service
imports it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.core
@pytest.mark.parametrize("bare", ["query", "schemas", "index", "flows"])
def test_a_layer_is_not_importable_under_its_bare_name_even_from_the_repository_root(bare, tmp_path):
    for cwd in (REPO, tmp_path):
        done = _python(f"import {bare}", cwd)
        assert done.returncode != 0 and ("ImportError" in done.stderr or "ModuleNotFoundError" in done.stderr), (
            cwd,
            done.stderr,
        )


@pytest.mark.core
def test_the_query_module_imports_without_the_ingestion_stack(tmp_path):
    heavy = [
        "prefect",
        "torch",
        "sentence_transformers",
        "unstructured",
        "great_expectations",
        "dask",
        "cairn.flows",
        "cairn.sources",
        "cairn.chunkers",
        "cairn.quality",
    ]
    done = _python(f"import sys, cairn.query; print([m for m in {heavy!r} if m in sys.modules])", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
