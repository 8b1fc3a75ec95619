"""Each parser's and the chunkers' output over the sample corpus in data/, pinned by a digest beside its output
version (schemas/recipe.py OUTPUT_VERSIONS). Rows record the versions they were made with, and a run re-chunks
every document of an older one: a change of output that does not bump its number would leave every indexed
document as the old code made it. When one of these fails, the output changed: bump the number in
schemas/recipe.py and put the new digest here (`python -m tests.integration.test_recipe_golden` prints them). Here,
not in tests/unit: it reads the whole sample, cloning its git bundle with git; `make test` runs it (core)."""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from cairn.chunkers import chunk_document
from cairn.schemas import SourceDocument
from cairn.schemas.config import ChunkingConfig, load_config
from cairn.schemas.recipe import OUTPUT_VERSIONS
from cairn.sources import DiscoveryFailure, open_source

pytestmark = pytest.mark.core

DATA = Path(__file__).resolve().parents[2] / "data"

# (output version, digest of the output over the sample) per parser, and for the chunkers.
GOLDEN: dict[str, tuple[int, str]] = {
    "wiki": (2, "21043515e43c2bb7"),
    "pagerduty": (1, "d2b95dfe63bc4eb6"),
    "pdf": (1, "c2ed019388e29bd0"),
    "git": (1, "68d77a813aa5e954"),
    "chunkers": (2, "ddf49280e7c9ab66"),
}
# What the chunkers are pinned over: one source of each layout family (Markdown, incidents, agreements, code).
CHUNKED = ("runbooks", "incidents", "contracts", "infra")


def documents(name: str, cache: Path) -> list[SourceDocument]:
    """The sample source `name` of data/cairn.toml, loaded (a git source mirrored into `cache`)."""
    config = load_config(DATA / "cairn.toml")
    source_config = config.source(name)
    if source_config.type == "git":
        source_config = source_config.model_copy(update={"cache_dir": str(cache), "keep_history": False})
    source = open_source(source_config, {}, s3=config.s3)
    refs = sorted((r for r in source.discover() if not isinstance(r, DiscoveryFailure)), key=lambda r: r.locator)
    return [source.load(ref) for ref in refs]


def parsed(doc: SourceDocument) -> dict[str, Any]:
    """What a parser decides of a document, without what depends on where or when it was read."""
    return {
        "locator": doc.locator,
        "title": doc.title,
        "content": doc.content,
        "content_type": str(doc.content_type),
        "service": doc.service_name,
        "environment": str(doc.environment),
        "severity": str(doc.severity),
        "tags": doc.tags,
        "doc_tag": doc.doc_tag,
        "acl": sorted(doc.access_control_list),
        "extra": {k: v for k, v in doc.extra.items() if k not in ("commit", "commit_time", "mtime")},
    }


def digest(items: list[Any]) -> str:
    return hashlib.sha256(json.dumps(items, sort_keys=True, default=str).encode()).hexdigest()[:16]


def outputs(cache: Path) -> dict[str, str]:
    """The digest of each parser's output and of the chunkers'."""
    by_type = {"wiki": "runbooks", "pagerduty": "incidents", "pdf": "contracts", "git": "infra"}
    loaded = {name: documents(name, cache) for name in CHUNKED}
    found = {kind: digest([parsed(d) for d in loaded[name]]) for kind, name in by_type.items()}
    chunking = ChunkingConfig()
    sections = [asdict(s) for name in CHUNKED for d in loaded[name] for s in chunk_document(d, chunking)]
    found["chunkers"] = digest(sections)
    return found


@pytest.fixture(scope="module")
def found(tmp_path_factory) -> dict[str, str]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    return outputs(tmp_path_factory.mktemp("git"))


@pytest.mark.parametrize("kind", sorted(GOLDEN))
def test_output_changes_only_with_its_version_bumped(kind, found):
    version, pinned = GOLDEN[kind]
    assert OUTPUT_VERSIONS[kind] == version, f"{kind}: version bumped; pin its new digest {found[kind]} here too"
    assert found[kind] == pinned, (
        f"{kind}'s output over data/ changed (digest {found[kind]}, pinned {pinned}): bump OUTPUT_VERSIONS[{kind!r}] "
        "in schemas/recipe.py, so that the next run re-chunks what the old code made, and pin the new digest here"
    )


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        print(json.dumps(outputs(Path(folder)), indent=2))
