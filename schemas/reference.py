"""The configuration reference, written from the models themselves: `python -m cairn.schemas.reference >
docs/configuration.md`. A unit test fails when the committed page and the models disagree."""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Set

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from cairn.schemas import config as settings
from cairn.schemas.query_config import DEPRECATED_KEYS
from cairn.schemas.source_config import SOURCE_MODELS, AccessRule, SourceBase

_FIELD_LINE = re.compile(r"^    (\w+): [^#]*?#\s*(.+)$")

TABLES: list[tuple[str, type[BaseModel]]] = [
    ("[index]", settings.IndexConfig),
    ("[milvus]", settings.MilvusConfig),
    ("[embedding]", settings.EmbeddingConfig),
    ("[chunking]", settings.ChunkingConfig),
    ("[query]", settings.QueryConfig),
    ("[quality]", settings.QualityConfig),
    ("[s3]", settings.S3Config),
    ("[runner]", settings.RunnerConfig),
    ("[metrics]", settings.MetricsConfig),
    ("[serve]", settings.ServeConfig),
    ("[[serve.principals]]", settings.ServePrincipal),
]


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    extra = field.json_schema_extra
    if isinstance(extra, dict) and "shown_default" in extra:
        return f"`{extra['shown_default']}`"
    return "`" + json.dumps(field.get_default(call_default_factory=True), default=str) + "`"


def _type(annotation: object) -> str:
    text = getattr(annotation, "__name__", None) if isinstance(annotation, type) else None
    text = text or str(annotation).replace("typing.", "")
    text = re.sub(r"Annotated\[(.*?), AfterValidator\(func=<function \w+ at 0x[0-9a-f]+>\)\]", r"\1", text)
    text = re.sub(r"cairn\.schemas\.\w+\.", "", text)
    return text.replace("|", "\\|")


def _comments(model: type[BaseModel]) -> dict[str, str]:
    """The comment beside each field in the model's source (the tables document their keys that way)."""
    found: dict[str, str] = {}
    for line in inspect.getsource(model).splitlines():
        match = _FIELD_LINE.match(line)
        if match:
            found[match.group(1)] = match.group(2).strip()
    return found


def _table(model: type[BaseModel], skip: Set[str] = frozenset()) -> list[str]:
    rows = ["| key | type | default | meaning |", "|---|---|---|---|"]
    comments = _comments(model)
    for name, field in model.model_fields.items():
        if name in skip:
            continue
        meaning = " ".join((field.description or comments.get(name, "")).split()).replace("|", "\\|")
        rows.append(f"| `{name}` | {_type(field.annotation)} | {_default(field)} | {meaning} |")
    return rows


FILES = [
    "## Where Cairn's files go",
    "",
    "Relative paths in the file are read against the file's own folder (`data/cairn.toml`: against `data/`);",
    "`$CAIRN_MILVUS_URI` and `$CAIRN_QUERY_MODEL` against the working directory. Everything Cairn writes for an",
    "index lives under one folder, `[index] dir`, unless its own key says otherwise:",
    "",
    "| what | key | default |",
    "|---|---|---|",
    "| the folder itself | `[index] dir` | the folder of a Milvus Lite `[milvus] uri` the file sets, else `data/index`"
    " beside the file |",
    "| the Milvus Lite index (and its `.lock`) | `[milvus] uri` | `<dir>/cairn.db` |",
    "| cursors, folder files' version memos, what the last runs skipped or refused | `state_path` |"
    " `<dir>/state.sqlite` |",
    "| the derived ledgers (one SQLite file per collection) | beside `state_path` | `<dir>/ledgers/` |",
    "| `cairn serve`'s feedback | `[serve] feedback_path` | `<dir>/feedback.sqlite` (beside `state_path`) |",
    "| the embedding cache | `[embedding] cache_path` | `<dir>/embeddings.sqlite` |",
    "| the onnx-int8 export of a model, the models' optimised graphs | `[embedding] onnx_cache` | `<dir>/models` |",
    "| a git source's mirror | `[[sources]] cache_dir` | `<dir>/git` |",
    "| data-quality reports | `[quality] report_dir` | `<dir>/reports` |",
    "",
    "**Moved**: relative paths were read against the working directory, and these defaults were `data/index/...`",
    "and `data/reports` of the working directory, whatever `[milvus] uri` said. A configuration written that way",
    "keeps working: a relative path of a key that existed then which names nothing beside the file but something",
    "in the working directory is read there, with a warning saying how to write it; so is `data/index` of the",
    "working directory when the file sets neither `[index] dir` nor a Lite `uri` and only that folder exists.",
    "A file set with `[milvus] uri` alone now sits beside the Lite index: where cursors, cache or mirrors moved",
    "that way, the next run starts them afresh (every source listed once, a mirror cloned again; documents the",
    "collection holds unchanged are neither re-read nor re-embedded): move the files along to skip that.",
]


def render() -> str:
    """The whole reference page as Markdown."""
    out = [
        "# Configuration reference",
        "",
        "Generated from the configuration models (`python -m cairn.schemas.reference > docs/configuration.md`);",
        "do not edit by hand. One TOML file: `--config PATH`, else `$CAIRN_CONFIG`, else `data/cairn.toml`.",
        "`$CAIRN_MILVUS_URI` overrides `[milvus] uri`; secrets are never read from the file. An unknown key,",
        "a value of the wrong type, an identifier that would not fit the collection, or a value that would only",
        "fail later (a `transform` that cannot be imported, a backend the model does not run with, an S3 URI",
        "without a bucket, an unknown placeholder or severity, a time that is not ISO) is refused when the file",
        "is loaded, naming the key, the source and the file.",
        "",
        *FILES,
        "",
        "## top-level keys",
        "",
        *_table(settings.CairnConfig, skip=set(settings.CairnConfig.model_fields) - {"state_path"}),
        "",
    ]
    for title, model in TABLES:
        out += [f"## {title}", "", *_table(model), ""]
        if model is settings.QueryConfig:
            renamed = [f"`{old}` -> `{new}`" for old, new in DEPRECATED_KEYS.items()]
            out += [
                "Deprecated names, still read as the keys that replaced them (a file that sets both is refused): "
                + ", ".join([*renamed, "`steps.second_pass` -> `steps.rerank`"])
                + ". 0.5's second pass (a borderline top rescored with its section's vector) became the rerank "
                "(docs/retrieval.md).",
                "",
            ]
    out += ["## [[sources]]: keys every source has", "", *_table(SourceBase), ""]
    common = set(SourceBase.model_fields)
    for kind, model in SOURCE_MODELS.items():
        doc = " ".join((model.__doc__ or "").split())
        out += [f'## [[sources]] type = "{kind}"', "", doc, "", *_table(model, skip=common | {"type"}), ""]
    out += ["## access rules (pagerduty `access = [...]`)", "", *_table(AccessRule), ""]
    return "\n".join(out)


if __name__ == "__main__":
    print(render(), end="")
