"""deploy/ checked statically: no container engine runs here, so the files are read, not started.

prefect.yaml: a deployment per configured source, valid schedules, entrypoints that load to the flows with
the parameters named, one work pool. docker-compose.yml: the services and what they depend on exist.
Dockerfile: every COPY source exists in the build context and is not ignored; torch comes first.
(tests/integration/test_deploy.py runs prefect.yaml for real against a local Prefect server;
tests/integration/test_deploy_entrypoints.py loads its entrypoints and schedules with Prefect.)
"""

from __future__ import annotations

import fnmatch
import re

import pytest
import yaml

from tests.conftest import REPO

DEPLOY = REPO / "deploy"
POOL = "cairn-process"


@pytest.fixture(scope="module")
def prefect_yaml() -> dict:
    return yaml.safe_load((DEPLOY / "prefect.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((DEPLOY / "docker-compose.yml").read_text(encoding="utf-8"))


def by_entrypoint(prefect_yaml: dict, entrypoint: str) -> list[dict]:
    return [d for d in prefect_yaml["deployments"] if d["entrypoint"] == entrypoint]


def test_backfill_on_demand_and_a_scheduled_report(prefect_yaml):
    [backfill] = by_entrypoint(prefect_yaml, "cairn.flows.ingest:backfill_flow")
    assert {"source", "since", "until", "commits"} <= set(backfill["parameters"])
    assert not backfill.get("schedules")
    [report] = by_entrypoint(prefect_yaml, "cairn.flows.report:report_flow")
    assert report["schedules"] and report["parameters"]["config_path"] == "data/cairn.toml"


def test_one_process_pool_and_a_working_directory_from_the_worker(prefect_yaml):
    assert {d["work_pool"]["name"] for d in prefect_yaml["deployments"]} == {POOL}
    [step] = prefect_yaml["pull"]
    assert step["prefect.deployments.steps.set_working_directory"]["directory"] == "{{ $CAIRN_HOME }}"
    assert prefect_yaml["build"] is None and prefect_yaml["push"] is None  # nothing built or uploaded at deploy


def _depends(service: dict) -> list[str]:
    depends = service.get("depends_on") or []
    return list(depends) if isinstance(depends, (list, dict)) else []


def test_compose_services_dependencies_volumes_and_build_exist(compose, prefect_yaml):
    services = compose["services"]
    assert {"etcd", "minio", "milvus", "prefect-server", "worker"} <= set(services)
    for name, service in services.items():
        for dependency in _depends(service):
            assert dependency in services, f"{name} depends on a service that does not exist: {dependency}"
        for volume in service.get("volumes") or []:
            source = volume.split(":", 1)[0]
            if not source.startswith((".", "/", "$")):
                assert source in (compose.get("volumes") or {}), f"{name}: volume {source} is not declared"
        assert "image" in service or "build" in service, name
    assert set(_depends(services["milvus"])) >= {"etcd", "minio"}
    assert "milvus" in _depends(services["worker"])
    # the worker image is built by a service, from this repository, with the Dockerfile that exists
    built = {s["image"]: s["build"] for s in services.values() if "build" in s}
    build = built[services["worker"]["image"]]
    context = (DEPLOY / build["context"]).resolve()
    assert context == REPO and (context / build["dockerfile"]).resolve() == DEPLOY / "Dockerfile"
    # the worker serves the pool the deployments use, against the server, with the Milvus server as index
    assert POOL in services["worker"]["command"]
    env = services["worker"]["environment"]
    assert env["PREFECT_API_URL"].startswith("http://prefect-server:")
    assert env["CAIRN_MILVUS_URI"] == "http://milvus:19530" and env["CAIRN_HOME"] == "/opt/cairn"
    assert "deploy/prefect.yaml" in " ".join(services["register"]["command"])


def _dockerfile_instructions() -> list[tuple[str, str]]:
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            out.append((keyword.upper(), rest.strip()))
    return out


def _ignored(path: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(path, p) or path.startswith(p.rstrip("/") + "/") for p in patterns)


def test_dockerfile_copies_only_what_exists_and_installs_cpu_torch_first():
    instructions = _dockerfile_instructions()
    assert instructions[0][0] == "FROM"
    ignore = [
        line.strip()
        for line in (REPO / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    copies = [rest for keyword, rest in instructions if keyword in ("COPY", "ADD")]
    assert copies
    for rest in copies:
        parts = [p for p in rest.split() if not p.startswith("--")]
        for source in parts[:-1]:
            assert (REPO / source).exists(), f"COPY source {source} is not in the build context"
            assert not _ignored(source.rstrip("/"), ignore), f"COPY source {source} is excluded by .dockerignore"
    # every package the project installs is copied before the install
    import tomllib

    folders = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"].values()
    for folder in folders:
        assert any(p.split()[0].rstrip("/") == folder for p in copies), f"package folder {folder} is not copied"
    runs = [rest for keyword, rest in instructions if keyword == "RUN"]
    torch = next(i for i, r in enumerate(runs) if "torch==" in r)
    project = next(
        i for i, r in enumerate(runs) if "pip install '.[ingest,serve]'" in r
    )  # the pipeline and the HTTP service, not the query side alone
    assert torch < project
    makefile_torch = re.search(r"torch==[\w.+]+", (REPO / "Makefile").read_text()).group(0)
    assert makefile_torch in runs[torch]  # the same pin as the Makefile
    cmd = next(rest for keyword, rest in instructions if keyword == "CMD")
    assert POOL in cmd
