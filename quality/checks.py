"""The expectations Cairn holds its index to, and running them with great-expectations.

Suites (one validation per source, and per source and content type for the size bands):
- sizes: full_text token_count in the parent band (mostly 0.95; a document shorter than the band's floor,
  hence a single section, is exempt from it and from the health check), abstracts in the abstract band (a
  section shorter than that band's floor, whose abstract cannot fill it, exempt), children
  in the child band (mostly 0.95), except one per section (its smallest), which holds the remainder of a
  text that does not divide evenly and may be short by design (it must still hold text: text_length),
  and definitions, which are children of their own whatever their length;
- metadata: tenant_id, version_hash, temporal_start, source_uri, document_id not null; at least one ACL
  group; enums within their sets; temporal_start <= temporal_end; chunk_id unique; every child's parent
  present; no empty text; both embeddings present with the model's dimension;
- health: chunk_health_score (defined in chunkers/health.py: 1.0 for a section inside the band that was
  neither merged nor split, lowered for each merge, split and distance outside the band) >= health_min.

GE runs in a file context inside the report folder, so its Data Docs are written there too.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from cairn.schemas.config import CairnConfig
from cairn.schemas.records import ChunkType, ContentType, Environment, Severity, SourceType


@dataclass
class Result:
    suite: str  # "<source>" or "<source>.<content_type>"
    expectation: str
    column: str
    success: bool
    unexpected_percent: float
    element_count: int
    examples: list[dict] = field(default_factory=list)
    params: dict = field(default_factory=dict)  # what the expectation asked: min_value, max_value, mostly, value_set...

    def to_dict(self) -> dict:
        return {
            "suite": self.suite,
            "expectation": self.expectation,
            "column": self.column,
            "success": self.success,
            "unexpected_percent": round(self.unexpected_percent, 3),
            "element_count": self.element_count,
            "examples": self.examples,
            "params": self.params,
        }

    def describe_params(self) -> str:
        """The parameters as a person reads them: "400 to 900, mostly 0.95"."""
        p = self.params
        parts = []
        if "min_value" in p or "max_value" in p:
            low, high = (
                f"{v:g}" if isinstance(v, (int, float)) else v for v in (p.get("min_value"), p.get("max_value"))
            )
            parts.append(
                f"{low} to {high}"
                if low is not None and high is not None
                else f">= {low}"
                if low is not None
                else f"<= {high}"
            )
        if "value_set" in p:
            values = [str(v) for v in p["value_set"]]
            parts.append("one of " + ", ".join(values[:8]) + (f" (+{len(values) - 8})" if len(values) > 8 else ""))
        if p.get("or_equal") is not None:
            parts.append("or equal" if p["or_equal"] else "strictly")
        if p.get("mostly") is not None:
            parts.append(f"mostly {p['mostly']:g}")
        return ", ".join(parts)


def bands(config: CairnConfig, source: str, content_type: str) -> dict[str, float]:
    q, c = config.quality, config.chunking
    out = {
        "parent_min_tokens": q.parent_min_tokens or c.parent_min_tokens,
        "parent_max_tokens": q.parent_max_tokens or c.parent_max_tokens,
        "parent_mostly": q.parent_mostly,
        "abstract_min_tokens": c.abstract_min_tokens,
        "abstract_max_tokens": c.abstract_max_tokens,
        "abstract_mostly": q.abstract_mostly,
        "child_min_tokens": c.child_min_tokens,
        "child_max_tokens": c.child_max_tokens,
        "child_mostly": q.child_mostly,
        "health_min": q.health_min,
        "health_mostly": q.health_mostly,
    }
    for key in (content_type, source, f"{source}.{content_type}"):  # most specific last
        out.update(q.overrides.get(key, {}))
    return out


def size_expectations(b: dict) -> list[tuple[str, object]]:
    import great_expectations as gx
    from great_expectations.expectations.row_conditions import Column

    E = gx.expectations
    # A document shorter than the band's floor is one section by necessity (a small Terraform file, a
    # README): neither its size nor the health that follows from it is held against the chunker.
    is_parent = Column("chunk_type") == "full_text"
    sized = dict(
        row_condition=(is_parent & (Column("whole_document") == False))  # noqa: E712
        | (is_parent & (Column("token_count") >= b["parent_min_tokens"]))
    )
    # An abstract is drawn from its section, so a section shorter than the abstract band's floor (a short
    # document, whole) cannot fill it: it is not held against the abstract (the first ingest of a small healthy
    # wiki failed here, a false alarm).
    abstracted = dict(row_condition=is_parent & (Column("token_count") >= b["abstract_min_tokens"]))
    child = dict(row_condition=(Column("chunk_type") == "child") & (Column("is_remainder") == False))  # noqa: E712
    return [
        (
            "full_text token_count",
            E.ExpectColumnValuesToBeBetween(
                column="token_count",
                min_value=b["parent_min_tokens"],
                max_value=b["parent_max_tokens"],
                mostly=b["parent_mostly"],
                **sized,
            ),
        ),
        (
            "abstract_token_count",
            E.ExpectColumnValuesToBeBetween(
                column="abstract_token_count",
                min_value=b["abstract_min_tokens"],
                max_value=b["abstract_max_tokens"],
                mostly=b["abstract_mostly"],
                **abstracted,
            ),
        ),
        (
            "child token_count",
            E.ExpectColumnValuesToBeBetween(
                column="token_count",
                min_value=b["child_min_tokens"],
                max_value=b["child_max_tokens"],
                mostly=b["child_mostly"],
                **child,
            ),
        ),
        (
            "chunk_health_score",
            E.ExpectColumnValuesToBeBetween(
                column="chunk_health_score",
                min_value=b["health_min"],
                max_value=1.0,
                mostly=b["health_mostly"],
                **sized,
            ),
        ),
    ]


def metadata_expectations(dim: int) -> list[tuple[str, object]]:
    import great_expectations as gx

    E = gx.expectations
    out = [
        (c, E.ExpectColumnValuesToNotBeNull(column=c))
        for c in ("tenant_id", "version_hash", "temporal_start", "source_uri", "document_id")
    ]
    out += [
        ("acl_size", E.ExpectColumnValuesToBeBetween(column="acl_size", min_value=1)),
        ("chunk_type", E.ExpectColumnValuesToBeInSet(column="chunk_type", value_set=[m.value for m in ChunkType])),
        (
            "content_type",
            E.ExpectColumnValuesToBeInSet(column="content_type", value_set=[m.value for m in ContentType]),
        ),
        ("source_type", E.ExpectColumnValuesToBeInSet(column="source_type", value_set=[m.value for m in SourceType])),
        ("environment", E.ExpectColumnValuesToBeInSet(column="environment", value_set=[m.value for m in Environment])),
        ("severity", E.ExpectColumnValuesToBeInSet(column="severity", value_set=[m.value for m in Severity])),
        (
            "temporal_end >= temporal_start",
            E.ExpectColumnPairValuesAToBeGreaterThanB(
                column_A="temporal_end", column_B="temporal_start", or_equal=True
            ),
        ),
        ("chunk_id", E.ExpectColumnValuesToBeUnique(column="chunk_id")),
        ("parent_exists", E.ExpectColumnValuesToBeInSet(column="parent_exists", value_set=[True])),
        ("text_length", E.ExpectColumnValuesToBeBetween(column="text_length", min_value=1)),
        ("abstract_embedding_dim", E.ExpectColumnValuesToBeInSet(column="abstract_embedding_dim", value_set=[dim])),
        ("full_text_embedding_dim", E.ExpectColumnValuesToBeInSet(column="full_text_embedding_dim", value_set=[dim])),
    ]
    return out


def _quiet_gx() -> None:
    logging.getLogger("great_expectations").setLevel(logging.ERROR)


def validate(frame: pd.DataFrame, config: CairnConfig, dim: int, folder: Path) -> list[Result]:
    """Run every suite over the frame in a GE file context under `folder`, then build its Data Docs once
    (a checkpoint per suite rebuilt them after each one: 0.7 s a suite, most of a small run's report)."""
    import great_expectations as gx
    from great_expectations.core.result_format import ResultFormat

    _quiet_gx()
    context = gx.get_context(mode="file", project_root_dir=str(folder))
    try:
        context.variables.progress_bars = gx.data_context.types.base.ProgressBarsConfig(globally=False)
    except Exception:  # noqa: BLE001 - older layouts: bars only clutter the log, and their absence is harmless
        pass
    source_ds = context.data_sources.add_pandas("cairn")
    result_format = {"result_format": ResultFormat.COMPLETE, "unexpected_index_column_names": ["chunk_id"]}
    results: list[Result] = []
    groups: list[tuple[str, pd.DataFrame, list]] = []
    for source, rows in frame.groupby("source_name", dropna=False):
        groups.append((str(source), rows, metadata_expectations(dim)))
        for content_type, typed in rows.groupby("content_type", dropna=False):
            groups.append(
                (f"{source}.{content_type}", typed, size_expectations(bands(config, str(source), str(content_type))))
            )
    for number, (suite_name, rows, expectations) in enumerate(groups):
        asset = source_ds.add_dataframe_asset(f"rows_{number}")
        batch = asset.add_batch_definition_whole_dataframe("all")
        # the whole suite in one store write (adding expectations one by one rewrote the suite's file each time)
        suite = context.suites.add(gx.ExpectationSuite(name=suite_name, expectations=[e for _, e in expectations]))
        labels = {added.id: label for (label, _), added in zip(expectations, suite.expectations, strict=True)}
        definition = context.validation_definitions.add(
            gx.ValidationDefinition(name=suite_name, data=batch, suite=suite)
        )
        validation = definition.run(
            batch_parameters={"dataframe": rows.reset_index(drop=True)}, result_format=result_format
        )
        for outcome in validation.results:
            label = labels.get(outcome.expectation_config.id, outcome.expectation_config.type)
            results.append(_result(suite_name, label, outcome, rows, config.quality.examples))
    context.build_data_docs()  # from the validation results each run above stored
    return results


def _result(suite: str, label: str, outcome, rows: pd.DataFrame, limit: int) -> Result:
    data = outcome.result or {}
    kind = outcome.expectation_config.type
    unexpected = data.get("unexpected_index_list") or []
    ids = [u.get("chunk_id") if isinstance(u, dict) else None for u in unexpected][:limit]
    by_id = rows.set_index("chunk_id", drop=False) if "chunk_id" in rows else None
    examples = []
    for chunk_id in ids:
        if by_id is not None and chunk_id in by_id.index:
            row = by_id.loc[chunk_id]
            row = row.iloc[0] if isinstance(row, pd.DataFrame) else row
            examples.append(
                {
                    "chunk_id": chunk_id,
                    "document_id": row.get("document_id"),
                    "section_id": row.get("section_id"),
                    "locator": row.get("locator"),
                    "token_count": _plain(row.get("token_count")),
                }
            )
        else:
            examples.append({"chunk_id": chunk_id})
    kwargs = outcome.expectation_config.kwargs or {}
    return Result(
        suite=suite,
        expectation=kind,
        column=label,
        success=bool(outcome.success),
        unexpected_percent=float(data.get("unexpected_percent") or 0.0),
        element_count=int(data.get("element_count") or 0),
        examples=examples,
        params={k: _plain_param(kwargs[k]) for k in PARAMS if kwargs.get(k) is not None},
    )


PARAMS = ("min_value", "max_value", "mostly", "value_set", "or_equal")  # what an expectation's reader needs


def _plain_param(value):
    return (
        sorted(value, key=str)
        if isinstance(value, (set, frozenset))
        else list(value)
        if isinstance(value, tuple)
        else value
    )


def _plain(value):
    try:
        return None if pd.isna(value) else int(value)
    except (TypeError, ValueError):
        return value
