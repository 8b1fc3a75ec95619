"""flows.prefect_api: whether flow runs go to a Prefect server, asked from the environment and Prefect's profiles
file before Prefect is imported (the no-op check and the CLI's choice must not pay for the import), from Prefect's
settings after, and from Prefect itself when the working directory holds settings only Prefect reads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cairn.flows.prefect_api import prefect_api_configured

ASK = (
    "import sys; from cairn.flows.prefect_api import prefect_api_configured as asked; "
    "before = asked(), 'prefect' in sys.modules; import prefect; print(*before, asked())"
)
SERVER = "http://127.0.0.1:9/api"


def answers(home: Path, cwd: Path | None = None, **env: str) -> list[str]:
    """(configured?, Prefect imported?) before importing Prefect, then configured? after, in a fresh process."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    clean["PREFECT_HOME"] = str(home)  # no profile of this machine's user either
    clean["PYTHONPATH"] = os.pathsep.join(sys.path)  # cairn importable from any working directory
    done = subprocess.run(
        [sys.executable, "-c", ASK], env=clean | env, cwd=cwd or home, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_a_server_in_the_environment_is_configured(monkeypatch):
    monkeypatch.setenv("PREFECT_API_URL", SERVER)
    assert prefect_api_configured()


PROFILES = f'active = "remote"\n\n[profiles.remote]\nPREFECT_API_URL = "{SERVER}"\n\n[profiles.local]\nX = 1\n'


def test_a_server_in_the_active_profile_is_seen_before_prefect_is_imported_and_asking_does_not_import_it(tmp_path):
    (tmp_path / "profiles.toml").write_text(PROFILES)
    assert answers(tmp_path) == ["True", "False", "True"]
    assert answers(tmp_path, PREFECT_PROFILE="local") == ["False", "False", "False"]  # another profile is active
    assert answers(tmp_path / "none", cwd=tmp_path) == ["False", "False", "False"]  # no profiles file: the defaults


def test_settings_in_the_working_directory_are_asked_of_prefect_itself(tmp_path):
    """A .env or prefect.toml there is read by Prefect alone: Prefect is imported to answer."""
    work = tmp_path / "work"
    work.mkdir()
    (work / ".env").write_text(f"PREFECT_API_URL={SERVER}\n")
    assert answers(tmp_path, cwd=work) == ["True", "True", "True"]


def test_a_configured_server_takes_the_runs_and_no_local_server_is_started(monkeypatch, tmp_path):
    from cairn.flows.prefect_server import LocalApi

    monkeypatch.setenv("PREFECT_HOME", str(tmp_path))
    monkeypatch.setenv("PREFECT_API_URL", SERVER)
    assert LocalApi.begin(idle_seconds=0) is None
    assert list(tmp_path.iterdir()) == []  # no record, lease or start lock of a local server


def test_a_server_in_a_profile_takes_the_runs_from_the_shell_too(tmp_path):
    """The CLI asks before its flow run, with Prefect imported: a profile's server is seen, no local one started."""
    (tmp_path / "profiles.toml").write_text(f'active = "remote"\n\n[profiles.remote]\nPREFECT_API_URL = "{SERVER}"\n')
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")} | {"PREFECT_HOME": str(tmp_path)}
    ask = "from cairn.flows.prefect_server import LocalApi; print(LocalApi.begin(idle_seconds=0))"
    done = subprocess.run([sys.executable, "-c", ask], env=clean, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["None"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["profiles.toml"]


def test_the_local_server_a_run_reports_to_is_not_a_configured_server():
    """So the writer slot of a Milvus server stays the local lock: the local server would never free the Prefect
    concurrency slot of a killed run (its ephemeral services do not repossess)."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from cairn.flows.prefect_api import reporting_to_local

    local = "http://127.0.0.1:4321/api"
    with temporary_settings({PREFECT_API_URL: local}):
        assert prefect_api_configured()  # a server named in Prefect's settings
        with reporting_to_local(local):
            assert not prefect_api_configured()
        assert prefect_api_configured()


def test_runs_on_the_local_server_send_no_heartbeats_and_the_settings_come_back_after(tmp_path):
    """A heartbeat only feeds automations that mark silent runs crashed, which the local server has none of; its
    thread cost each run up to a second at its end."""
    from concurrent.futures import Future

    from prefect.settings import get_current_settings

    from cairn.flows.prefect_server import LocalApi

    api = LocalApi.__new__(LocalApi)  # a started server's handle, without starting one
    api.home, api._url = tmp_path, Future()
    api._url.set_result("http://127.0.0.1:4321/api")
    before = get_current_settings().flows.heartbeat_frequency
    with api.settings() as url:
        assert url == "http://127.0.0.1:4321/api" and get_current_settings().flows.heartbeat_frequency is None
    assert get_current_settings().flows.heartbeat_frequency == before
