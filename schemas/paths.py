"""Where Cairn's files go: the `[index]` table, and every path of a configuration made absolute at load time.

One folder holds what Cairn writes for an index, each file overridable by its own key:

    [index] dir                    the folder (default: the folder of a Milvus Lite `[milvus] uri` the file sets,
                                   else `data/index` beside the configuration file)
        cairn.db                   [milvus] uri (Milvus Lite)
        state.sqlite               state_path: cursors, version memos, what the last runs skipped or refused
        ledgers/, feedback.sqlite  beside state_path (index/derived.py, cairn serve)
        embeddings.sqlite          [embedding] cache_path
        models/                    [embedding] onnx_cache
        git/                       [[sources]] cache_dir of a git source (its mirror)
        reports/                   [quality] report_dir (formerly data/reports of the working directory)

A relative path in the file is read against the file's folder (formerly: the working directory). So that a
configuration written for the old rule keeps working, a relative path that names nothing beside the file but
something that exists in the working directory is read there as before, with a warning saying how to write it.
$CAIRN_MILVUS_URI and $CAIRN_QUERY_MODEL, which are not in the file, are read against the working directory.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from cairn.schemas.source_config import _Strict

if TYPE_CHECKING:
    from cairn.schemas.config import CairnConfig

log = logging.getLogger("cairn.config")

LEGACY_INDEX_DIR = "data/index"  # the default folder before [index] dir (then read against the working directory)
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://|^[\w.-]+@[\w.-]+:", re.IGNORECASE)  # a clone URL, s3://, http(s)://


class IndexConfig(_Strict):
    """The folder of Cairn's own files for one index (see schemas/paths.py): the Lite index, cursors, embedding
    cache, model exports, git mirrors, derived ledgers and reports live under it unless their own key says
    otherwise."""

    dir: str | None = Field(
        default=None,
        description=(
            "the folder of Cairn's files for this index (Lite index, cursors, embedding cache, git mirrors, derived "
            "ledgers, reports), each overridable by its own key; default: the folder of a Milvus Lite [milvus] uri "
            "set in the file, else data/index beside the configuration file"
        ),
    )


class _Resolver:
    """Paths of one configuration made absolute: relative ones against `base` (the file's folder), or the working
    directory where only that reading names something (the former rule), said in a warning."""

    def __init__(self, base: Path, origin: str) -> None:
        self.base = base.resolve()
        self.cwd = Path.cwd().resolve()
        self.origin = origin

    def path(self, key: str, value: str, legacy_rule: bool = True) -> str:
        """`value` absolute; `legacy_rule`: a key that existed before relative paths were read against the file,
        which a configuration written for the working directory may hold."""
        given = Path(value).expanduser()
        if given.is_absolute():
            return str(given)
        beside, legacy = self.base / given, self.cwd / given
        if legacy_rule and beside != legacy and not beside.exists() and legacy.exists():
            log.warning(
                "%s: %s %r is read in the working directory (%s), as Cairn formerly read it; relative paths are now "
                "read against the configuration file's folder (%s): write it as an absolute path or relative to it",
                self.origin,
                key,
                value,
                legacy,
                self.base,
            )
            return str(legacy)
        return str(beside)

    def location(self, key: str, value: str) -> str:
        """A value that may be a URL (a git repository, an s3:// prefix): a path only when it is not one."""
        return value if _URL.match(value) else self.path(key, value)


def resolve_paths(config: CairnConfig, base: Path | None) -> None:
    """Every path of `config` made absolute, in place, and the keys left unset placed under [index] dir. `base`:
    the configuration file's folder (None: a configuration given as a table, read against the working directory)."""
    resolver = _Resolver(base or Path.cwd(), config.config_path or "the configuration")
    milvus, embedding, quality = config.milvus, config.embedding, config.quality
    if milvus.is_lite and "uri" in milvus.model_fields_set:
        milvus.uri = resolver.path("[milvus] uri", milvus.uri)
    folder = index_folder(config, resolver)
    if milvus.is_lite and "uri" not in milvus.model_fields_set:
        milvus.uri = str(folder / "cairn.db")
    config.index.dir = str(folder)
    _place(config, "state_path", "state_path", folder / "state.sqlite", resolver)
    _place(embedding, "cache_path", "[embedding] cache_path", folder / "embeddings.sqlite", resolver)
    _place(embedding, "onnx_cache", "[embedding] onnx_cache", folder / "models", resolver)
    if embedding.query_model:
        embedding.query_model = resolver.path("[embedding] query_model", embedding.query_model)
    _place(quality, "report_dir", "[quality] report_dir", folder / "reports", resolver)
    if config.serve.feedback_path:
        config.serve.feedback_path = resolver.path("[serve] feedback_path", config.serve.feedback_path)
    for source in config.sources:
        where = f"source {source.name!r}"
        for key in ("path", "repo"):
            value = getattr(source, key, None)
            if value:
                setattr(source, key, resolver.location(f"{where} {key}", value))
        if source.type == "git":
            _place(source, "cache_dir", f"{where} cache_dir", folder / "git", resolver)


def index_folder(config: CairnConfig, resolver: _Resolver) -> Path:
    """[index] dir as given; else the folder of the Lite index the file names; else data/index beside the file
    (or, when only that exists, in the working directory: the former default)."""
    if config.index.dir:
        return Path(resolver.path("[index] dir", config.index.dir, legacy_rule=False))  # a key newer than the rule
    if config.milvus.is_lite and "uri" in config.milvus.model_fields_set:
        return Path(config.milvus.uri).parent
    return Path(resolver.path("the default [index] dir", LEGACY_INDEX_DIR))


def _place(model: BaseModel, field: str, key: str, default: Path, resolver: _Resolver) -> None:
    """`model.field` made absolute when the file set it, else its place under [index] dir."""
    given = field in model.model_fields_set
    setattr(model, field, resolver.path(key, getattr(model, field)) if given else str(default))
