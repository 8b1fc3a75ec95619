"""A service install: `pip install "cairn[query]"` into a fresh virtualenv (no torch, no Prefect, no
unstructured, great-expectations or Dask) answers retrieve() against an index the full install built, with
the query model the full install exported, exactly as the full install answers. Skipped, with the reason,
when the package index cannot be reached."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from cairn.embedding import encoder_for
from cairn.embedding.query_model import export_query_model
from cairn.flows.ingest import ingest_flow
from cairn.index.store import MilvusStore
from cairn.query import Principal, Retriever
from cairn.schemas.config import load_config
from tests.conftest import REPO, write_config, write_page
from tests.integration.test_ingest_isolation import BODY

MAX_INSTALLED_MB = 700
LEFT_OUT = ("torch", "transformers", "sentence_transformers", "prefect", "unstructured", "great_expectations", "dask")
QUESTIONS = ["how do I drain the queue and restart the worker", "confirm the lag falls below one hundred"]

SLIM_SCRIPT = """
import importlib.util, json, sys
from cairn.query import Principal, Retriever
left_out = [m for m in sys.argv[2].split(",") if importlib.util.find_spec(m) is not None]
retriever = Retriever.from_config(sys.argv[1])
caller = Principal("acme", ["sre"])
answers = {q: [(h.chunk_id, h.score) for h in retriever.retrieve(q, caller).hits] for q in sys.argv[3:]}
retriever.close()
print(json.dumps({"installed_but_left_out": left_out, "answers": answers, "encoder": retriever.encoder.identity}))
"""


def source_tree(target: Path) -> Path:
    """The files a build of the distribution reads, copied (a build in the repository would leave build/ there)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    for folder in set(project["tool"]["setuptools"]["package-dir"].values()):
        shutil.copytree(REPO / folder, target / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, target / name)
    return target


def pip(venv: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )


def test_a_query_install_without_torch_answers_as_the_full_install_does(tmp_path, prefect_server):
    root = tmp_path / "wiki"
    for name in ("drain", "lag", "restart"):
        write_page(root, f"{name}.md", BODY.format(title=name.title()))
    config = write_config(
        tmp_path / "c.toml",
        tmp_path / "index",
        [
            {"name": "w", "type": "wiki", "path": str(root), "tenant": "acme", "acl": ["sre"]},
        ],
    )
    ingest_flow(config_path=str(config))
    retriever = Retriever.from_config(config)
    full = {
        q: [(h.chunk_id, h.score) for h in retriever.retrieve(q, Principal("acme", ["sre"])).hits] for q in QUESTIONS
    }
    retriever.close()
    MilvusStore(load_config(config).milvus, dim=384).close()  # the writer's close lets another process open the file
    model = export_query_model(encoder_for(load_config(config).embedding), tmp_path / "query-model")

    venv = tmp_path / "slim"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    probe = pip(
        venv,
        "download",
        "--no-deps",
        "--quiet",
        "--timeout",
        "15",
        "--retries",
        "1",
        "-d",
        str(tmp_path / "probe"),
        "tokenizers>=0.22,<0.24",
        timeout=120,
    )
    if probe.returncode != 0:
        pytest.skip(f"the package index cannot be reached: {probe.stderr.strip().splitlines()[-1:]}")
    installed = pip(venv, "install", "--quiet", f"{source_tree(tmp_path / 'src')}[query]")
    assert installed.returncode == 0, installed.stderr[-3000:]

    run = subprocess.run(
        [str(venv / "bin" / "python"), "-c", SLIM_SCRIPT, str(config), ",".join(LEFT_OUT), *QUESTIONS],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "CAIRN_QUERY_MODEL": str(model), "PYTHONPATH": ""},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    slim = json.loads(run.stdout.strip().splitlines()[-1])
    assert slim["installed_but_left_out"] == []
    assert slim["encoder"] == encoder_for(load_config(config).embedding).identity
    for question in QUESTIONS:
        assert [c for c, _ in slim["answers"][question]] == [c for c, _ in full[question]] and full[question]
        assert all(abs(a - b) < 1e-4 for (_, a), (_, b) in zip(slim["answers"][question], full[question]))

    write_page(root, "new.md", BODY.format(title="New"))  # work to do: the pipeline itself must run
    refused = subprocess.run(
        [str(venv / "bin" / "cairn"), "ingest", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert refused.returncode == 2 and "install `cairn[ingest]`" in refused.stderr, refused.stderr[-2000:]

    site = next((venv / "lib").glob("python3*/site-packages"))
    megabytes = sum(p.stat().st_size for p in site.rglob("*") if p.is_file()) / 2**20
    assert megabytes <= MAX_INSTALLED_MB, f"{megabytes:.0f} MB installed"
