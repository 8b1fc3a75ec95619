"""Cairn's configuration: one TOML file, every knob with a default, documented beside it and nowhere else (the
tables here, `[query]` in schemas/query_config.py, `[[sources]]` in schemas/source_config.py).

Where the file comes from: `--config PATH`, else $CAIRN_CONFIG, else `data/cairn.toml`.
Relative paths inside it resolve against the file's folder; what Cairn writes lives under `[index] dir` unless a
key of its own says otherwise (schemas/paths.py).
Secrets never live in the file: $CAIRN_MILVUS_TOKEN (or [milvus] token_env) and $CAIRN_MILVUS_URI override;
$CAIRN_QUERY_MODEL overrides [embedding] query_model.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_core import ErrorDetails

from cairn.errors import ConfigError
from cairn.schemas.metrics_config import MetricsConfig
from cairn.schemas.paths import IndexConfig, resolve_paths
from cairn.schemas.quality_config import QUALITY_BANDS, QualityConfig, check_bands
from cairn.schemas.query_config import QUERY_STEPS, QueryConfig
from cairn.schemas.runner_config import RunnerConfig
from cairn.schemas.serve_config import ServeConfig, ServePrincipal
from cairn.schemas.source_config import (
    SOURCE_MODELS,
    GitSourceConfig,
    PagerDutySourceConfig,
    PdfSourceConfig,
    SourceConfig,
    WikiSourceConfig,
    _Strict,
)
from cairn.schemas.values import index_path

# What `from cairn.schemas.config import ...` offers: every table (the [query] and [[sources]] models live in
# their own modules) and the loading functions, with the error they raise.
__all__ = [
    "DEFAULT_CONFIG",
    "MODEL_BACKENDS",
    "QUALITY_BANDS",
    "QUERY_STEPS",
    "SOURCE_MODELS",
    "CairnConfig",
    "ChunkingConfig",
    "ConfigError",
    "EmbeddingConfig",
    "IndexConfig",
    "MetricsConfig",
    "GitSourceConfig",
    "MilvusConfig",
    "PagerDutySourceConfig",
    "PdfSourceConfig",
    "QualityConfig",
    "QueryConfig",
    "RunnerConfig",
    "S3Config",
    "ServeConfig",
    "ServePrincipal",
    "SourceConfig",
    "WikiSourceConfig",
    "load_config",
    "parse_config",
    "resolve_config_path",
]

DEFAULT_CONFIG = Path("data/cairn.toml")


class MilvusConfig(_Strict):
    uri: str = index_path("cairn.db", "a path ending in .db = Milvus Lite; http(s)://host:port = a server")
    collection: str = Field(
        default="cairn",
        description="the name queried: an alias over the generations <name>__g1, __g2... (a rebuild switches it)",
    )
    token_env: str = "CAIRN_MILVUS_TOKEN"  # the server token is read from this variable, never from the file
    hnsw_m: int = 16  # HNSW graph degree of both dense indexes
    hnsw_ef_construction: int = 200  # HNSW build-time candidate list
    write_batch_rows: int = 512  # rows per upsert call
    lite_idle_seconds: float = 30.0  # Lite: the shared server process stops this long after its last client is gone

    @property
    def is_lite(self) -> bool:
        return not self.uri.startswith(("http://", "https://", "tcp://", "grpc://"))

    @property
    def token(self) -> str:
        return os.environ.get(self.token_env, "")

    @property
    def identity(self) -> str:
        """Which collection this is, from wherever a command runs: the Lite file's resolved path (or the server's
        URI) and the collection's name. Files beside the index key what belongs to it by a hash of this."""
        uri = str(Path(self.uri).resolve()) if self.is_lite else self.uri
        return f"{uri}\0{self.collection}"


class EmbeddingConfig(_Strict):
    # Both models come with their packages' weights, offline. bge-small-en-v1.5 (an int8 ONNX file, 12 layers)
    # retrieves better than all-MiniLM-L6-v2 (6 layers); the README's benchmark gives both.
    model: Literal["all-MiniLM-L6-v2", "bge-small-en-v1.5"] = Field(
        default="bge-small-en-v1.5", description="both bundled with their packages, offline"
    )
    # torch: sentence-transformers (fp32). onnx-int8: the same weights exported to ONNX once, quantised to
    # int8, run by onnxruntime (faster on a CPU; see the README's benchmark). auto: the model's own first
    # (torch for all-MiniLM-L6-v2; bge-small-en-v1.5 ships as int8 ONNX and has no other). A collection keeps
    # the encoder that filled it: after a switch the next ingest rebuilds the index beside the serving one
    # (docs/operations.md).
    backend: Literal["auto", "torch", "onnx-int8"] = Field(
        default="auto",
        description=(
            "auto: the model's first; torch: sentence-transformers fp32; onnx-int8: int8 ONNX (faster, not "
            "interchangeable)"
        ),
    )
    onnx_cache: str = index_path(
        "models",
        "where the onnx-int8 export and the models' optimised graphs (optimized/) are made on first use, then reused",
    )
    # Texts per forward pass. Small batches are faster on a CPU: padding to the longest text of a batch costs
    # less, and the activations stay in cache. Measured on 308 prometheus-operator / 400 openshift runbook
    # inputs, torch, 2 cores, seconds: batch 4: 8.6 / 12.2, 8: 9.3 / 12.8, 16: 9.6 / 14.8, 32: 10.4 / 17.8,
    # 64: 12.6 / 19.6 (onnx-int8 alike; `python -m bench.embedding` prints the sweep).
    batch_size: int = 8  # texts per forward pass (small is faster on a CPU: less padding)
    cache_path: str = index_path("embeddings.sqlite", "(model identity, text hash) -> vector; never embed twice")
    query_model: str = Field(
        default="",
        description=(
            "a folder made by `cairn export-query-model DIR`: queries embed with it (onnxruntime, no torch, what a "
            "`cairn[query]` service needs); empty: the model above; $CAIRN_QUERY_MODEL overrides"
        ),
    )

    @field_validator("backend")
    @classmethod
    def _runs_the_model(cls, value: str, info: ValidationInfo) -> str:
        model = info.data.get("model")
        if model in MODEL_BACKENDS and value != "auto" and value not in MODEL_BACKENDS[model]:
            raise ValueError(
                f"the embedding model {model} runs with backend {' or '.join(MODEL_BACKENDS[model])}, not {value!r}"
            )
        return value


# The backends each model runs with, the first being what backend = "auto" picks (embedding/model.py's MODELS)
MODEL_BACKENDS: dict[str, tuple[str, ...]] = {
    "all-MiniLM-L6-v2": ("torch", "onnx-int8"),
    "bge-small-en-v1.5": ("onnx-int8",),  # its package ships the int8 ONNX file alone
}


class ChunkingConfig(_Strict):
    parent_min_tokens: int = Field(
        default=400,
        description="a parent section (generation context) is at least this long, unless its document is shorter",
    )
    parent_max_tokens: int = 900  # and at most this long
    parent_target_tokens: int = 650  # what the packer aims at when it cuts a long section
    child_min_tokens: int = 100  # a child chunk (what search hits) is at least this long, but a section's remainder
    child_max_tokens: int = 200  # and at most this long (the model reads 256 word pieces)
    child_target_tokens: int = 150  # what children aim at
    abstract_min_tokens: int = 100  # an extractive abstract per section, at least this long when the section allows
    abstract_max_tokens: int = 200  # and at most this long
    hard_block_tokens: int = 4000  # a single block (code fence, table) above this is cut by lines

    @model_validator(mode="after")
    def _ordered(self) -> ChunkingConfig:
        for kind in ("parent", "child"):
            lo, target, hi = (getattr(self, f"{kind}_{k}_tokens") for k in ("min", "target", "max"))
            if not 0 < lo <= target <= hi:
                raise ValueError(f"chunking: need 0 < {kind}_min_tokens <= {kind}_target_tokens <= {kind}_max_tokens")
        if not 0 < self.abstract_min_tokens <= self.abstract_max_tokens:
            raise ValueError("chunking: need 0 < abstract_min_tokens <= abstract_max_tokens")
        return self


class S3Config(_Strict):
    """S3 for sources read from `uri = "s3://bucket/prefix"` and for report uploads. A source may override
    with its own `s3_endpoint_url` / `s3_region` keys. Credentials are never read from the file: only the
    standard AWS environment/profile chain (AWS_ACCESS_KEY_ID..., AWS_PROFILE, an instance role)."""

    endpoint_url: str | None = None  # an S3-compatible server (MinIO, Ceph); None = AWS itself
    region: str | None = None  # None = the AWS default chain decides
    page_size: int = Field(default=1000, ge=1, le=1000)  # keys per list_objects_v2 call
    # attempts per S3 call, the first included: 503 SlowDown, 5xx, throttling, timeouts and connection errors
    # are retried with capped exponential backoff and jitter (botocore's retry modes)
    retry_attempts: int = Field(
        default=5,
        ge=1,
        le=20,
        description="attempts per S3 call, the first included (503 SlowDown, 5xx, throttling, timeouts)",
    )
    retry_mode: Literal["standard", "adaptive"] = "standard"  # adaptive also slows the client down when throttled
    connect_timeout_seconds: float = Field(
        default=10, gt=0, description="per connection attempt to S3 (each attempt is retried)"
    )
    read_timeout_seconds: float = Field(
        default=60,
        gt=0,
        description=(
            "per socket read of an S3 answer (boto3 bounds each read, not a whole answer: a listing as a whole is "
            "bounded by its source's listing_budget_seconds)"
        ),
    )


class CairnConfig(_Strict):
    index: IndexConfig = Field(default_factory=IndexConfig)
    milvus: MilvusConfig = Field(default_factory=MilvusConfig)
    embedding: EmbeddingConfig = Field(default_factory=EmbeddingConfig)
    chunking: ChunkingConfig = Field(default_factory=ChunkingConfig)
    query: QueryConfig = Field(default_factory=QueryConfig)
    quality: QualityConfig = Field(default_factory=QualityConfig)
    s3: S3Config = Field(default_factory=S3Config)
    runner: RunnerConfig = Field(default_factory=RunnerConfig)
    serve: ServeConfig = Field(default_factory=ServeConfig)
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)
    sources: list[SourceConfig] = Field(default_factory=list)
    state_path: str = index_path(
        "state.sqlite",
        "per-source cursors (last commit, high-water mark), folder files' version memos and what the last runs "
        "skipped or refused; the derived ledgers (ledgers/) and cairn serve's feedback live beside it",
    )
    config_path: str | None = None

    @model_validator(mode="after")
    def _paths_placed(self, info: ValidationInfo) -> CairnConfig:
        """Every path absolute, read against the file's folder (`base` in the validation context), and what the
        file leaves unset under [index] dir (schemas/paths.py)."""
        base = (info.context or {}).get("base")
        resolve_paths(self, Path(base) if base is not None else None)
        return self

    @model_validator(mode="after")
    def _unique_sources(self) -> CairnConfig:
        names = [s.name for s in self.sources]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"source names must be unique; repeated: {', '.join(dupes)}")
        return self

    @model_validator(mode="after")
    def _bands_possible(self) -> CairnConfig:
        check_bands(self.quality, self.chunking)
        return self

    @model_validator(mode="after")
    def _sidecars_apart(self) -> CairnConfig:
        from cairn.schemas.sidecars import check_sidecars

        check_sidecars(self)
        return self

    @property
    def ledger_folder(self) -> Path:
        """Where the derived ledgers live (index/derived.py): a `ledgers` folder beside the cursors."""
        return Path(self.state_path).parent / "ledgers"

    @property
    def feedback_file(self) -> Path:
        """Where `cairn serve` keeps /v1/feedback: [serve] feedback_path, else feedback.sqlite beside the cursors."""
        return Path(self.serve.feedback_path or Path(self.state_path).parent / "feedback.sqlite")

    def source(self, name: str) -> SourceConfig:
        for source in self.sources:
            if source.name == name:
                return source
        known = ", ".join(s.name for s in self.sources) or "none configured"
        raise ConfigError(f"no source named {name!r} in {self.config_path or 'the config'} (known: {known})")


def resolve_config_path(path: str | os.PathLike[str] | None = None) -> Path:
    chosen = path or os.environ.get("CAIRN_CONFIG") or DEFAULT_CONFIG
    return Path(chosen)


def load_config(path: str | os.PathLike[str] | None = None) -> CairnConfig:
    """Read and validate the config; raise ConfigError naming the file and key at fault."""
    config_path = resolve_config_path(path)
    try:
        raw = tomllib.loads(config_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file {config_path} not found: pass --config PATH or set CAIRN_CONFIG") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {config_path} is not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        bad = exc.object[exc.start : exc.start + 1]
        raise ConfigError(
            f"config file {config_path} is not UTF-8 text (byte {exc.start}: {bad!r}): save it as UTF-8"
        ) from None
    except OSError as exc:  # a folder, unreadable: the reason in one line, not a traceback
        raise ConfigError(f"config file {config_path} cannot be read: {exc.strerror or exc}") from None
    return parse_config(raw, str(config_path), base=config_path.parent)


def parse_config(raw: dict[str, Any], origin: str = "<config>", base: Path | None = None) -> CairnConfig:
    """Validate a parsed config table (what `load_config` read from `origin`), the environment's overrides applied;
    its relative paths are read against `base` (the file's folder; None: the working directory)."""
    raw = dict(raw)
    raw.setdefault("milvus", {})
    raw["milvus"] = dict(raw["milvus"])
    if os.environ.get("CAIRN_MILVUS_URI"):  # not in the file: a relative path is the working directory's
        raw["milvus"]["uri"] = _from_cwd(os.environ["CAIRN_MILVUS_URI"])
    if os.environ.get("CAIRN_QUERY_MODEL"):
        raw["embedding"] = {**raw.get("embedding", {}), "query_model": _from_cwd(os.environ["CAIRN_QUERY_MODEL"])}
    if "token" in raw["milvus"]:
        raise ConfigError(f"{origin}: [milvus] token must not be written in the file; set $CAIRN_MILVUS_TOKEN")
    try:
        return CairnConfig.model_validate({**raw, "config_path": origin}, context={"base": base})
    except ValidationError as exc:
        raise ConfigError(f"{origin}: " + "; ".join(_problem(err, raw) for err in exc.errors())) from None


def _from_cwd(value: str) -> str:
    """A path from the environment, absolute against the working directory (a URL as it is)."""
    if "://" in value or Path(value).is_absolute():
        return value
    return str(Path(value).absolute())


_CREDENTIAL_WORDS = ("secret", "password", "token", "access_key", "credential")


def _problem(err: ErrorDetails, raw: dict[str, Any]) -> str:
    """One validation error in words: which table or source, which key, what is wrong with it."""
    loc = [str(p) for p in err["loc"]]
    message = err["msg"].removeprefix("Value error, ")
    if len(loc) >= 2 and loc[0] == "sources" and loc[1].isdigit():
        entry = (raw.get("sources") or [])[int(loc[1])]
        entry = entry if isinstance(entry, dict) else {}
        where = f"source {entry.get('name', '#' + loc[1])!r}" + (
            f" ({entry['type']})" if entry.get("type") in SOURCE_MODELS else ""
        )
        keys = loc[3:] if len(loc) > 2 and loc[2] in SOURCE_MODELS else loc[2:]
        if err["type"] == "extra_forbidden" and keys:
            return f"{where}: unknown key {keys[-1]!r}{_hint(keys[-1], entry.get('type'))}"
        if err["type"] == "union_tag_invalid":
            return (
                f"{where}: type {entry.get('type')!r} is not one of {', '.join(SOURCE_MODELS)} (sources.{loc[1]}.type)"
            )
        return f"{where}: {'.'.join(keys) or 'entry'}: {message}"
    if err["type"] == "extra_forbidden":
        return f"{'.'.join(loc)}: unknown key" + (_hint(loc[-1], None) if len(loc) == 1 else "")
    return f"{'.'.join(loc)}: {message}" if loc else message  # a check across tables names its keys itself


def _hint(key: str, source_type: str | None) -> str:
    if any(word in key.lower() for word in _CREDENTIAL_WORDS):
        return "; credentials never go in the file (the AWS chain, or the variable named by token_env)"
    model = SOURCE_MODELS.get(source_type or "")
    if model is None:
        return ""
    close = difflib.get_close_matches(key, list(model.model_fields), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else f"; known keys: {', '.join(model.model_fields)}"
