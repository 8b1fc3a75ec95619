"""The expectations Cairn holds its index to, as data: each one a `Check` with a fixed slot, so that what
great-expectations found for a row can be kept with the row (index/derived.py) as two bit masks, the checks
that looked at it and the checks it failed, and a report over a whole collection re-checks only the rows
nobody checked yet (quality/tallies.py).

Suites (one per source for the metadata, one per source and content type for the size bands):
- sizes: full_text token_count in the parent band (mostly 0.95; a document shorter than the band's floor,
  hence a single section, is exempt from it and from the health check), abstracts in the abstract band (a
  section shorter than that band's floor, whose abstract cannot fill it, exempt), children in the child band
  (mostly 0.95), except one per section (its smallest), which holds the remainder of a text that does not
  divide evenly and may be short by design (it must still hold text: text_length), and definitions, which are
  children of their own whatever their length;
- metadata: tenant_id, version_hash, temporal_start, source_uri, document_id not null; at least one ACL
  group; enums within their sets; temporal_start <= temporal_end; chunk_id unique; every child's parent
  present; no empty text; both embeddings present with the model's dimension;
- health: chunk_health_score (defined in chunkers/health.py: 1.0 for a section inside the band that was
  neither merged nor split, lowered for each merge, split and distance outside the band) >= health_min.

Which rows a check looks at is decided here, once, by a boolean column of the frame (`scope`) that
great-expectations' row condition reads and the masks are built from; and, as great-expectations counts them,
a row whose value is missing (null) is not looked at, except by a not-null check (nulls are what it looks
for) and by the pair check (only a row missing both values is skipped). quality/checks.py compares these
counts with great-expectations' own on every validation.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from cairn.schemas.config import CairnConfig
from cairn.schemas.quality_config import bands as quality_bands
from cairn.schemas.records import ChunkType, ContentType, Environment, Severity, SourceType

CHECKS_VERSION = "1"  # what the checks are; a row checked under another version is checked again
# The frame's boolean columns a size check's row condition reads (added per suite by `scoped`).
SIZED, ABSTRACTED, CHILD_CHECKED = "checks_sized_parent", "checks_abstract", "checks_child"


@dataclass(frozen=True)
class Check:
    """One expectation: its label in reports, its slot (bit) in a row's masks, what great-expectations runs."""

    label: str
    kind: str  # great-expectations' expectation class
    kwargs: dict[str, Any] = field(default_factory=dict)  # column(s) and parameters, as the class takes them
    scope: str | None = None  # the frame's boolean column selecting the rows it looks at; None: every row
    missing: str = "null"  # "null": a null value is not looked at; "none": nulls are looked at; "both": pair
    slot: int = -1

    @property
    def columns(self) -> list[str]:
        return [self.kwargs[k] for k in ("column", "column_A", "column_B") if k in self.kwargs]

    @property
    def params(self) -> dict[str, Any]:
        return {k: v for k, v in self.kwargs.items() if k not in ("column", "column_A", "column_B")}

    @property
    def mostly(self) -> float | None:
        return self.kwargs.get("mostly")

    def expectation(self) -> Any:
        """The great-expectations expectation (imported here: 3-6 s the first time)."""
        import great_expectations as gx
        from great_expectations.expectations.row_conditions import Column

        condition = {"row_condition": Column(self.scope) == True} if self.scope else {}  # noqa: E712
        return getattr(gx.expectations, self.kind)(**self.kwargs, **condition)

    def looked_at(self, frame: pd.DataFrame) -> pd.Series:
        """The rows of `frame` this check looks at, as great-expectations counts them (its element count
        less its missing count)."""
        rows = frame[self.scope].astype(bool) if self.scope else pd.Series(True, index=frame.index)
        values = frame[self.columns]
        if self.missing == "null":
            rows &= values.notna().all(axis=1)
        elif self.missing == "both":
            rows &= values.notna().any(axis=1)
        return rows

    def passes(self, checked: int, failed: int) -> bool:
        """Great-expectations' verdict from the counts: no failure, or at least `mostly` of the rows looked at
        pass; a check of no rows passes."""
        if checked == 0 or failed == 0:
            return True
        return self.mostly is not None and (checked - failed) / checked >= self.mostly


def _numbered(checks: list[Check], first: int) -> list[Check]:
    return [Check(c.label, c.kind, c.kwargs, c.scope, c.missing, first + i) for i, c in enumerate(checks)]


def metadata_checks(dim: int) -> list[Check]:
    """The metadata suite of a source (slots 0-16)."""
    between, in_set = "ExpectColumnValuesToBeBetween", "ExpectColumnValuesToBeInSet"
    checks = [
        Check(c, "ExpectColumnValuesToNotBeNull", {"column": c}, missing="none")
        for c in ("tenant_id", "version_hash", "temporal_start", "source_uri", "document_id")
    ]
    checks += [
        Check("acl_size", between, {"column": "acl_size", "min_value": 1}),
        Check("chunk_type", in_set, {"column": "chunk_type", "value_set": [m.value for m in ChunkType]}),
        Check("content_type", in_set, {"column": "content_type", "value_set": [m.value for m in ContentType]}),
        Check("source_type", in_set, {"column": "source_type", "value_set": [m.value for m in SourceType]}),
        Check("environment", in_set, {"column": "environment", "value_set": [m.value for m in Environment]}),
        Check("severity", in_set, {"column": "severity", "value_set": [m.value for m in Severity]}),
        Check(
            "temporal_end >= temporal_start",
            "ExpectColumnPairValuesAToBeGreaterThanB",
            {"column_A": "temporal_end", "column_B": "temporal_start", "or_equal": True},
            missing="both",
        ),
        Check("chunk_id", "ExpectColumnValuesToBeUnique", {"column": "chunk_id"}),
        Check("parent_exists", in_set, {"column": "parent_exists", "value_set": [True]}),
        Check("text_length", between, {"column": "text_length", "min_value": 1}),
        Check("abstract_embedding_dim", in_set, {"column": "abstract_embedding_dim", "value_set": [dim]}),
        Check("full_text_embedding_dim", in_set, {"column": "full_text_embedding_dim", "value_set": [dim]}),
    ]
    return _numbered(checks, 0)


METADATA_SLOTS = 17
SIZE_LABELS = ("full_text token_count", "abstract_token_count", "child token_count", "chunk_health_score")
SIZE_SLOTS = {label: METADATA_SLOTS + i for i, label in enumerate(SIZE_LABELS)}


def size_checks(b: dict) -> list[Check]:
    """The size suite of a source and content type (slots 17-20), on its bands (`bands`)."""
    between = "ExpectColumnValuesToBeBetween"
    checks = [
        Check(
            SIZE_LABELS[0],
            between,
            {
                "column": "token_count",
                "min_value": b["parent_min_tokens"],
                "max_value": b["parent_max_tokens"],
                "mostly": b["parent_mostly"],
            },
            SIZED,
        ),
        Check(
            SIZE_LABELS[1],
            between,
            {
                "column": "abstract_token_count",
                "min_value": b["abstract_min_tokens"],
                "max_value": b["abstract_max_tokens"],
                "mostly": b["abstract_mostly"],
            },
            ABSTRACTED,
        ),
        Check(
            SIZE_LABELS[2],
            between,
            {
                "column": "token_count",
                "min_value": b["child_min_tokens"],
                "max_value": b["child_max_tokens"],
                "mostly": b["child_mostly"],
            },
            CHILD_CHECKED,
        ),
        Check(
            SIZE_LABELS[3],
            between,
            {
                "column": "chunk_health_score",
                "min_value": b["health_min"],
                "max_value": 1.0,
                "mostly": b["health_mostly"],
            },
            SIZED,
        ),
    ]
    return _numbered(checks, METADATA_SLOTS)


def bands(config: CairnConfig, source: str, content_type: str) -> dict[str, float]:
    """The bands rows of `source` and `content_type` are held to (schemas/quality_config.py)."""
    return quality_bands(config.quality, config.chunking, source, content_type)


def scoped(rows: pd.DataFrame, b: dict) -> pd.DataFrame:
    """`rows` (one source and content type) with the scope columns its size checks read. A document shorter than
    the parent band's floor is one section by necessity (a small Terraform file, a README): neither its size nor
    the health that follows from it is held against the chunker. An abstract is drawn from its section, so a
    section shorter than the abstract band's floor cannot fill it (the first ingest of a small healthy wiki
    failed there, a false alarm). A child holding its stretch's remainder, or a definition, is exempt from the
    child band (quality/frames.py to_frame)."""
    parent = rows["chunk_type"] == ChunkType.FULL_TEXT.value
    tokens = pd.to_numeric(rows["token_count"], errors="coerce")
    return rows.assign(
        **{
            SIZED: parent & (~rows["whole_document"].astype(bool) | (tokens >= b["parent_min_tokens"])),
            ABSTRACTED: parent & (tokens >= b["abstract_min_tokens"]),
            CHILD_CHECKED: (rows["chunk_type"] == ChunkType.CHILD.value) & ~rows["is_remainder"].astype(bool),
        }
    )


def suites(frame: pd.DataFrame, config: CairnConfig, dim: int) -> Iterator[tuple[str, pd.DataFrame, list[Check]]]:
    """Every suite over `frame`, with its rows: per source its metadata suite, then per content type its size suite
    (its rows with the scope columns its checks read)."""
    for source, rows in frame.groupby("source_name", dropna=False):
        yield str(source), rows, metadata_checks(dim)
        for content_type, typed in rows.groupby("content_type", dropna=False):
            b = bands(config, str(source), str(content_type))
            yield f"{source}.{content_type}", scoped(typed, b), size_checks(b)


def checked_masks(frame: pd.DataFrame, config: CairnConfig, dim: int) -> np.ndarray:
    """Each row's `checked` mask: the slots of the checks that look at it (what validate records)."""
    masks = np.zeros(len(frame), dtype=np.int64)
    position = pd.Series(np.arange(len(frame)), index=frame.index)
    for _, rows, checks in suites(frame, config, dim):
        for check in checks:
            masks[position[rows.index[check.looked_at(rows)]].to_numpy()] |= np.int64(1) << check.slot
    return masks


def signature(config: CairnConfig, dim: int, source: str, content_type: str) -> str:
    """What a row of this source and content type was checked against: a row whose stored outcome carries
    another signature (the bands, a model's dimension or the checks changed since) is checked again. `mostly`
    is left out: it judges a suite's counts, not a row."""
    judged = [
        [c.label, c.kind, {k: v for k, v in c.kwargs.items() if k != "mostly"}, c.scope, c.missing, c.slot]
        for c in (*metadata_checks(dim), *size_checks(bands(config, source, content_type)))
    ]
    text = json.dumps([CHECKS_VERSION, judged], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
