"""The shape of the house: one `cairn` namespace, layers that import only downwards, small files and functions,
and a query module a service can import without the ingestion stack."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE_DIRS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
LAYER_FOLDERS = {
    name.removeprefix("cairn.").removeprefix("cairn"): REPO / folder for name, folder in PACKAGE_DIRS.items()
}

# What each layer may import of Cairn (besides itself and the root package's own modules: cairn.errors,
# cairn.redact). Data flows one way: sources -> chunkers -> index -> Milvus <- query; quality reads what index
# wrote; flows wire them; cli on top.
ALLOWED = {
    "": set(),
    "schemas": set(),
    "sources": {"schemas"},
    "chunkers": {"schemas"},
    "embedding": {"schemas"},
    "index": {"schemas", "embedding"},
    "quality": {"schemas", "index", "sources"},  # sources: the one S3 client (report uploads)
    "query": {"schemas", "embedding", "index"},
    "flows": {"schemas", "sources", "chunkers", "embedding", "index", "quality"},
    "serve": {"schemas", "embedding", "index", "query"},  # the query side as a service (HTTP, MCP, metrics)
    "integrations": {"schemas", "query"},  # framework adapters over a Retriever
    "cli": {"schemas", "sources", "chunkers", "embedding", "index", "quality", "query", "flows", "serve"},
}
MAX_LINES = 400
MAX_PARAMETERS = 6


def _python_files(folders) -> list[Path]:
    return sorted(p for folder in folders for p in Path(folder).rglob("*.py") if "__pycache__" not in p.parts)


def _cairn_imports(path: Path) -> set[str]:
    layers = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else []
        )
        for name in names:
            parts = name.split(".")
            if parts[0] == "cairn" and len(parts) > 1 and not (REPO / "cairn" / f"{parts[1]}.py").is_file():
                layers.add(parts[1])
    return layers


def test_every_layer_folder_is_a_cairn_subpackage():
    assert set(ALLOWED) == set(LAYER_FOLDERS), "a layer was added or removed: update ALLOWED"
    for folder in LAYER_FOLDERS.values():
        assert (folder / "__init__.py").is_file(), folder


def test_layers_import_only_the_layers_below_them():
    wrong = []
    for layer, folder in LAYER_FOLDERS.items():
        for path in _python_files([folder]):
            for imported in _cairn_imports(path) - ALLOWED[layer] - {layer}:
                wrong.append(f"{path.relative_to(REPO)} imports cairn.{imported}")
    assert not wrong, "\n".join(wrong)


def _declares_cli_flags(node: ast.FunctionDef) -> bool:
    """A Typer command: every parameter but the context is a flag or argument declaration (`Annotated[...,
    typer.Option(...)]` or a shared alias such as ConfigOption). Like a dataclass's fields, they declare; the
    logic they hand a typed options record to is held to the rule."""
    params = [a for a in node.args.args if a.arg != "ctx"]

    def declared(annotation) -> bool:
        text = ast.unparse(annotation) if annotation is not None else ""
        return "typer.Option" in text or "typer.Argument" in text or text.endswith("Option")

    return bool(params) and all(declared(a.annotation) for a in params)


def test_files_and_functions_stay_small():
    folders = [*LAYER_FOLDERS.values(), REPO / "bench", REPO / "scripts"]
    problems = []
    for path in _python_files(folders):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > MAX_LINES:
            problems.append(f"{path.relative_to(REPO)}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not _declares_cli_flags(node):
                args = node.args
                names = [
                    a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs] if a.arg not in ("self", "cls")
                ]
                count = len(names) + bool(args.vararg) + bool(args.kwarg)
                if count > MAX_PARAMETERS:
                    problems.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name}() takes {count} parameters")
    assert not problems, "\n".join(problems)


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("bare", ["query", "schemas", "index", "flows"])
def test_a_layer_is_not_importable_under_its_bare_name_even_from_the_repository_root(bare, tmp_path):
    for cwd in (REPO, tmp_path):
        done = _python(f"import {bare}", cwd)
        assert done.returncode != 0 and ("ImportError" in done.stderr or "ModuleNotFoundError" in done.stderr), (
            cwd,
            done.stderr,
        )


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


def test_the_package_version_is_the_one_pyproject_declares():
    import tomllib

    import cairn

    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert cairn.__version__ == declared
