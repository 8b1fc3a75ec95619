"""Type-check Cairn with mypy (`make lint`), strict on the packages pyproject.toml names.

pyproject.toml maps the repository's top-level folders into the `cairn` namespace (package-dir), which mypy
cannot read, and the editable install reaches them through an import hook mypy does not run. So this builds
the namespace as mypy must see it, a tree of links under build/typecheck/cairn/ to the real folders, and checks
`cairn` from there; mypy's paths are mapped back to the repository's own in what it prints.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TREE = REPO / "build" / "typecheck"


def link_tree() -> Path:
    package_dir = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    root = TREE / "cairn"
    root.mkdir(parents=True, exist_ok=True)
    for name, folder in package_dir.items():
        if name == "cairn":
            for path in (REPO / folder).glob("*.py"):
                _link(root / path.name, path)
        else:
            _link(root / name.split(".")[-1], REPO / folder)
    return root


def _link(at: Path, target: Path) -> None:
    if at.is_symlink() and at.resolve() == target.resolve():
        return
    at.unlink(missing_ok=True)
    at.symlink_to(target)


def main() -> int:
    link_tree()
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"), "-p", "cairn"],
        cwd=TREE,
        capture_output=True,
        text=True,
        check=False,
    )
    mapping = {
        f"cairn/{name.split('.')[-1]}/": f"{folder}/"
        for name, folder in tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
            "package-dir"
        ].items()
        if name != "cairn"
    }
    for line in (result.stdout + result.stderr).splitlines():
        for prefix, folder in mapping.items():
            if line.startswith(prefix):
                line = folder + line[len(prefix) :]
                break
        print(line)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
