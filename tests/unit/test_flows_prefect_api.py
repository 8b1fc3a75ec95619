"""flows.prefect_api: whether flow runs go to a Prefect server, asked in this process: from the environment, and
from Prefect's settings once it is imported. What a fresh process answers (a profile seen before Prefect is
imported, so the no-op check and the CLI's choice do not pay for the import; settings in the working directory
asked of Prefect itself): tests/integration/test_prefect_settings.py."""

from __future__ import annotations

from cairn.flows.prefect_api import prefect_api_configured

SERVER = "http://127.0.0.1:9/api"


def test_a_server_in_the_environment_is_configured(monkeypatch):
    monkeypatch.setenv("PREFECT_API_URL", SERVER)
    assert prefect_api_configured()


def test_a_configured_server_takes_the_runs_and_no_local_server_is_started(monkeypatch, tmp_path):
    from cairn.flows.prefect_server import LocalApi

    monkeypatch.setenv("PREFECT_HOME", str(tmp_path))
    monkeypatch.setenv("PREFECT_API_URL", SERVER)
    assert LocalApi.begin(idle_seconds=0) is None
    assert list(tmp_path.iterdir()) == []  # no record, lease or start lock of a local server


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
