"""The `cairn` command as a process of its own (moved from tests/unit/test_cli_app.py: each test starts fresh
interpreters): the heavy layers stay unimported by help and refused commands, and `python -m cairn.cli` and the
console script both run it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


def run_python(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, capture_output=True, text=True, timeout=120)


@pytest.mark.core
def test_help_and_a_refused_query_never_import_prefect_the_flows_or_torch():
    probe = (
        "import json, sys\nfrom cairn.cli.app import main\nrc = main(sys.argv[1:])\n"
        "print(json.dumps({'rc': rc, 'loaded': sorted(m for m in ('prefect', 'torch', 'cairn.flows') "
        "if m in sys.modules)}), file=sys.stderr)"
    )
    for argv in (
        ["--help"],
        ["query", "--help"],
        ["query", "x", "--tenant", "t"],
        ["status", "--config", "none.toml"],
        ["mcp", "--tenant", "t"],
    ):
        result = run_python(probe, *argv)
        verdict = json.loads(result.stderr.strip().splitlines()[-1])
        assert verdict["loaded"] == [], (argv, verdict)
        assert verdict["rc"] == (0 if "--help" in argv else 2), (argv, result.stderr)


@pytest.mark.core
def test_python_dash_m_and_the_console_script_both_run_the_command():
    module = subprocess.run(
        [sys.executable, "-m", "cairn.cli", "--help"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert module.returncode == 0 and "status" in module.stdout
    script = Path(sys.executable).parent / "cairn"
    if not script.exists():
        pytest.skip("no console script beside this interpreter")
    refused = subprocess.run([str(script), "query", "x"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "--tenant" in refused.stderr and "Traceback" not in refused.stderr
