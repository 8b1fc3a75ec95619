"""Shared fixtures: a Prefect test server per session, scratch configs, a small wiki written per test."""
from __future__ import annotations

import os
import socket
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"

os.environ.setdefault("DO_NOT_TRACK", "1")
import cairn.flows  # noqa: E402,F401  (Prefect defaults before any Prefect import)
from hypothesis import settings  # noqa: E402

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


@pytest.fixture(scope="session")
def prefect_server(tmp_path_factory):
    from prefect.testing.utilities import prefect_test_harness

    os.environ["PREFECT_RESULTS_LOCAL_STORAGE_PATH"] = str(tmp_path_factory.mktemp("prefect-results"))
    with prefect_test_harness(server_startup_timeout=600):  # a hang guard: a slow machine took 4 min
        yield


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


def write_config(path: Path, index_dir: Path, sources: list[dict], collection: str = "cairn", quality: dict | None = None,
                 s3: dict | None = None) -> Path:
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
def s3(moto_endpoint, monkeypatch, tmp_path):
    """An empty moto S3 (reset per test), fake credentials in the environment, and a client onto it."""
    import urllib.request

    import boto3

    for key, value in {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1",
                       "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
                       "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials")}.items():
        monkeypatch.setenv(key, value)
    for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(key, raising=False)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    opener.open(urllib.request.Request(f"{moto_endpoint}/moto-api/reset", method="POST"), timeout=10).close()
    return boto3.client("s3", endpoint_url=moto_endpoint, region_name="us-east-1")
