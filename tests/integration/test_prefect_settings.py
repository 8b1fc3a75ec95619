"""Prefect's settings as a fresh process sees them (moved from tests/unit: each test starts interpreters that
import Prefect). The defaults Cairn sets before Prefect is first imported (flows/__init__.py), which Prefect reads
and the environment overrides; and whether flow runs go to a Prefect server (flows/prefect_api.py), asked from the
environment and Prefect's profiles file before Prefect is imported, from Prefect itself when the working directory
holds settings only Prefect reads, and by the CLI's LocalApi with Prefect imported. The in-process answers:
tests/unit/test_flows_prefect_api.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ASK = (
    "import sys; from cairn.flows.prefect_api import prefect_api_configured as asked; "
    "before = asked(), 'prefect' in sys.modules; import prefect; print(*before, asked())"
)
READ = (
    "import cairn.flows; from prefect.settings import PREFECT_API_REQUEST_TIMEOUT as t, "
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS as s; print(t.value(), s.value())"
)
SERVER = "http://127.0.0.1:9/api"
PROFILES = f'active = "remote"\n\n[profiles.remote]\nPREFECT_API_URL = "{SERVER}"\n\n[profiles.local]\nX = 1\n'


def clean_environment(home: Path) -> dict[str, str]:
    """This process's environment without Prefect's settings, and a Prefect home of the test's: no profile of this
    machine's user either."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")} | {"PREFECT_HOME": str(home)}


def python(code: str, env: dict[str, str], cwd: Path | None = None) -> list[str]:
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def prefect_reads(home: Path, **env: str) -> list[str]:
    return python(READ, clean_environment(home) | env)


def answers(home: Path, cwd: Path | None = None, **env: str) -> list[str]:
    """(configured?, Prefect imported?) before importing Prefect, then configured? after, in a fresh process."""
    clean = clean_environment(home) | {"PYTHONPATH": os.pathsep.join(sys.path)}  # cairn importable from any cwd
    return python(ASK, clean | env, cwd=cwd or home)


@pytest.mark.core
def test_api_calls_and_the_temporary_server_get_ten_minutes_unless_the_environment_says_otherwise(tmp_path):
    assert prefect_reads(tmp_path) == ["600.0", "600"]
    assert prefect_reads(tmp_path, PREFECT_API_REQUEST_TIMEOUT="45") == ["45.0", "600"]


@pytest.mark.core
def test_a_server_in_the_active_profile_is_seen_before_prefect_is_imported_and_asking_does_not_import_it(tmp_path):
    (tmp_path / "profiles.toml").write_text(PROFILES)
    assert answers(tmp_path) == ["True", "False", "True"]
    assert answers(tmp_path, PREFECT_PROFILE="local") == ["False", "False", "False"]  # another profile is active
    assert answers(tmp_path / "none", cwd=tmp_path) == ["False", "False", "False"]  # no profiles file: the defaults


@pytest.mark.core
def test_settings_in_the_working_directory_are_asked_of_prefect_itself(tmp_path):
    """A .env or prefect.toml there is read by Prefect alone: Prefect is imported to answer."""
    work = tmp_path / "work"
    work.mkdir()
    (work / ".env").write_text(f"PREFECT_API_URL={SERVER}\n")
    assert answers(tmp_path, cwd=work) == ["True", "True", "True"]


@pytest.mark.core
def test_a_server_in_a_profile_takes_the_runs_from_the_shell_too(tmp_path):
    """The CLI asks before its flow run, with Prefect imported: a profile's server is seen, no local one started."""
    (tmp_path / "profiles.toml").write_text(f'active = "remote"\n\n[profiles.remote]\nPREFECT_API_URL = "{SERVER}"\n')
    ask = "from cairn.flows.prefect_server import LocalApi; print(LocalApi.begin(idle_seconds=0))"
    assert python(ask, clean_environment(tmp_path)) == ["None"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["profiles.toml"]
