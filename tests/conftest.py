"""Shared fixtures: a Prefect test server per session (started in the background), scratch configs, a small wiki
written per test."""

from __future__ import annotations

import inspect
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"

os.environ.setdefault("DO_NOT_TRACK", "1")
from hypothesis import settings  # noqa: E402

import cairn.flows  # noqa: E402,F401  (Prefect defaults before any Prefect import)

# No wall-clock limit per example: hypothesis's default deadline (200 ms) failed property tests on a busy
# machine, and speed is measured in bench/, never asserted in a test.
settings.register_profile("cairn", deadline=None)
settings.load_profile("cairn")


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on (for a server a test starts, or one it must not find)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "integration" in str(item.fspath):
            item.add_marker(pytest.mark.slow)
    # The unit layer first (it fails fastest), while the session's Prefect server starts beside it.
    items.sort(key=lambda item: "integration" in str(item.fspath))


def pytest_collection_finish(session):
    session.config.stash[_CHECKS] = _checks_server()  # a checks server the session finds is not its to stop
    if any("prefect_server" in item.fixturenames for item in session.items):
        session.config.stash[_SERVER] = PrefectTestServer()


def pytest_sessionfinish(session):
    server = session.config.stash.get(_SERVER, None)
    if server is not None:  # also when the session stopped before any test used it (-x in the unit layer)
        server.stop()
    started = _checks_server()  # one the session's runs started (quality/server.py): not left for its idle time
    if started is not None and started != session.config.stash.get(_CHECKS, None):
        from cairn.quality import server as checks

        checks.stop()


def _checks_server() -> int | None:
    """The pid of this code's data-quality checks server, if one runs (None too when its folder is unusable)."""
    from cairn.errors import CairnError
    from cairn.quality import server as checks

    try:
        return checks.running()
    except CairnError:
        return None


class PrefectTestServer:
    """The session's Prefect server (what `prefect.testing`'s harness runs: a temporary SQLite database, the
    ephemeral server's services), started as soon as collection shows that a test needs it, so that its start
    (minutes on a loaded machine, half of it database migrations) runs beside the unit layer instead of
    before the first integration test; and without importing Prefect's server package into pytest's process."""

    def __init__(self) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="cairn-prefect-"))
        self.database = f"sqlite+aiosqlite:///{self.home / 'prefect-test.db'}"
        self.port = free_port()
        self.api_url = f"http://127.0.0.1:{self.port}/api"
        env = {
            **os.environ,
            "PREFECT_UI_ENABLED": "0",
            "PREFECT__SERVER_EPHEMERAL": "1",
            "PREFECT__SERVER_FINAL": "1",
            "PREFECT_SERVER_DATABASE_CONNECTION_URL": self.database,
        }
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "--factory",
                "prefect.server.api.server:create_app",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--log-level",
                "error",
                "--lifespan",
                "on",
            ],
            env=env,
        )

    def wait_until_healthy(self, timeout: float = 600) -> None:  # a hang guard: a loaded machine took 5 min
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the test Prefect server exited with code {self.process.returncode}")
            try:
                with urllib.request.urlopen(f"{self.api_url}/health", timeout=5) as response:
                    if response.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"the test Prefect server was not healthy within {timeout:.0f} s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
        shutil.rmtree(self.home, ignore_errors=True)


_SERVER = pytest.StashKey[PrefectTestServer]()
_CHECKS = pytest.StashKey["int | None"]()  # the checks server running when the session began


@pytest.fixture(scope="session")
def prefect_server(request, tmp_path_factory):
    import prefect.context
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker
    from prefect.settings import (
        PREFECT_API_URL,
        PREFECT_RESULTS_LOCAL_STORAGE_PATH,
        PREFECT_SERVER_DATABASE_CONNECTION_URL,
        temporary_settings,
    )
    from prefect.utilities.asyncutils import run_coro_as_sync

    server = request.config.stash.get(_SERVER, None) or PrefectTestServer()
    results = os.environ["PREFECT_RESULTS_LOCAL_STORAGE_PATH"] = str(tmp_path_factory.mktemp("prefect-results"))
    try:
        server.wait_until_healthy()
        with temporary_settings(
            {
                PREFECT_API_URL: server.api_url,
                PREFECT_SERVER_DATABASE_CONNECTION_URL: server.database,
                PREFECT_RESULTS_LOCAL_STORAGE_PATH: results,
            }
        ):
            # also for code whose context was copied before this fixture (Prefect's own harness does the same)
            with prefect.context._temporary_global_settings_context(prefect.context.get_settings_context()):
                yield server

                async def drain() -> None:  # what the runs still send, before the server stops
                    try:
                        logs = APILogWorker.instance().drain()
                        if inspect.isawaitable(logs):
                            await logs
                    except RuntimeError:  # never started
                        pass
                    events = EventsWorker.drain_all()
                    if inspect.isawaitable(events):
                        await events

                run_coro_as_sync(drain())
    finally:
        server.stop()


@pytest.fixture(scope="session")
def onnx_cache(tmp_path_factory) -> str:
    """One folder for the onnx-int8 export, shared by every test that runs that backend: exported once per session."""
    return str(tmp_path_factory.mktemp("models"))


def write_page(root: Path, relative: str, body: str, **front) -> Path:
    """A Markdown page with YAML front matter built from keyword arguments."""
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for key, value in front.items():
        lines.append(f"{key}: {value!r}" if not isinstance(value, list) else f"{key}: {value}")
    header = "---\n" + "\n".join(lines) + "\n---\n" if lines else ""
    path.write_text(header + textwrap.dedent(body).lstrip(), encoding="utf-8")
    return path


def toml_value(value) -> str:
    """A TOML literal for str, number, bool, list and dict (inline table) values."""
    import json

    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value)


def sample_copy(folder: Path) -> Path:
    """The sample corpus and its config (data/, without an index or reports) copied to `folder`/data: its paths
    are read against the config's folder, so the copy's index, cursors and reports land in the copy. Returns the
    copied config's path."""
    import shutil

    target = folder / "data"
    shutil.copytree(REPO / "data", target, ignore=shutil.ignore_patterns("index", "reports"))
    return target / "cairn.toml"


def write_config(
    path: Path,
    index_dir: Path,
    sources: list[dict],
    collection: str = "cairn",
    quality: dict | None = None,
    s3: dict | None = None,
) -> Path:
    """A scratch config; data-quality reports are off unless `quality` is given (GE adds seconds per run)."""
    import json

    parts = [
        f"state_path = {json.dumps(str(index_dir / 'state.sqlite'))}",
        "[milvus]",
        f"uri = {json.dumps(str(index_dir / 'cairn.db'))}",
        f"collection = {json.dumps(collection)}",
        "[embedding]",
        f"cache_path = {json.dumps(str(index_dir / 'embeddings.sqlite'))}",
        "[quality]",
        f"report_dir = {json.dumps(str(index_dir.parent / 'reports'))}",
    ]
    for key, value in {"on_ingest": False, **(quality or {})}.items():
        parts.append(f"{key} = {toml_value(value)}")
    if s3:
        parts.append("[s3]")
        parts.extend(f"{key} = {toml_value(value)}" for key, value in s3.items())
    for source in sources:
        parts.append("[[sources]]")
        for key, value in source.items():
            parts.append(f"{key} = {toml_value(value)}")
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def shared_corpora() -> Path:
    root = SHARED / "corpora"
    if not root.is_dir():
        pytest.skip("../shared/corpora is absent")
    return root


@pytest.fixture(scope="session")
def moto_endpoint():
    """moto as a real S3 HTTP server on 127.0.0.1 (nothing leaves the machine); boto3 is pointed at it."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{server._server.server_port}"
    finally:
        server.stop()


@pytest.fixture
def aws_test_credentials(monkeypatch, tmp_path):
    """Fake AWS credentials and region in the environment, and no config or credentials file of the machine's."""
    for key, value in {
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
    }.items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def s3(moto_endpoint, aws_test_credentials, monkeypatch):
    """An empty moto S3 (reset per test), fake credentials in the environment, and a client onto it."""
    import urllib.request

    import boto3

    for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(key, raising=False)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    opener.open(urllib.request.Request(f"{moto_endpoint}/moto-api/reset", method="POST"), timeout=10).close()
    return boto3.client("s3", endpoint_url=moto_endpoint, region_name="us-east-1")
