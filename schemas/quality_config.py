"""The `[quality]` table: the data-quality checks' bands and where their reports go (quality/ reads it)."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from pydantic import Field, field_validator

from cairn.schemas.source_config import _Strict
from cairn.schemas.values import index_path, s3_uri

if TYPE_CHECKING:
    from cairn.schemas.config import ChunkingConfig

WORKER_IDLE_SECONDS = 900.0  # the checks server's default idle time (quality/server.py)


class QualityConfig(_Strict):
    """Data-quality checks (quality/): size bands per chunk type, `mostly` = the share of rows that must pass.
    `overrides` narrows bands per source, per content type, or per "source.content_type" (most specific
    wins), e.g. overrides = { incident = { parent_min_tokens = 150 } }."""

    on_ingest: bool = True  # check the rows each ingest or backfill wrote, and write a report for it
    report_dir: str = index_path(
        "reports",
        "one folder per run or `cairn report` below this (formerly data/reports of the working directory)",
        default="data/reports",
    )
    worker_idle_seconds: float = Field(
        default=WORKER_IDLE_SECONDS,
        ge=0,
        description="the data-quality checks server (great-expectations kept imported for this user's runs, "
        "quality/server.py) stops this long after the last run let go; a run within that time finds it warm, "
        "0 stops it with the run",
    )
    keep_reports: int = 50  # older report folders are removed (0 keeps them all)
    report_uri: str | None = None  # s3://bucket/prefix: each report folder is uploaded there too
    s3_endpoint_url: str | None = None  # overrides [s3] endpoint_url for the upload only
    s3_region: str | None = None  # overrides [s3] region for the upload only
    parent_min_tokens: int | None = None  # None = the chunking band
    parent_max_tokens: int | None = None  # None = the chunking band
    parent_mostly: float = 0.95  # share of parents that must be inside the band
    abstract_mostly: float = 0.95  # share of abstracts inside 100-200 tokens (the chunking band)
    child_mostly: float = 0.95  # one child per section (the remainder, its smallest) is not held to the band
    health_min: float = 0.5  # chunk_health_score at least this
    health_mostly: float = 0.90  # for this share of sections
    examples: int = 5  # failing rows named per expectation
    overrides: dict[str, dict[str, float]] = Field(
        default_factory=dict,
        description=(
            'narrower bands per source, content type or "source.content_type", e.g. '
            "{ incident = { parent_min_tokens = 150 } }"
        ),
    )

    @field_validator("report_uri")
    @classmethod
    def _bucket(cls, value: str | None) -> str | None:
        return s3_uri(value) if value is not None else None

    @field_validator("overrides")
    @classmethod
    def _known_bands(cls, value: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
        for where, band in value.items():
            for key in band:
                if key not in QUALITY_BANDS:
                    close = difflib.get_close_matches(key, QUALITY_BANDS, n=1, cutoff=0.6)
                    hint = f" (did you mean {close[0]!r}?)" if close else f"; known: {', '.join(QUALITY_BANDS)}"
                    raise ValueError(f"{where}: unknown band {key!r}{hint}")
        return value


# What [quality] overrides may narrow (quality/expectations.py reads them): the size bands and the shares held to them.
QUALITY_BANDS = (
    "parent_min_tokens",
    "parent_max_tokens",
    "parent_mostly",
    "abstract_min_tokens",
    "abstract_max_tokens",
    "abstract_mostly",
    "child_min_tokens",
    "child_max_tokens",
    "child_mostly",
    "health_min",
    "health_mostly",
)


def bands(quality: QualityConfig, chunking: ChunkingConfig, source: str, content_type: str) -> dict[str, float]:
    """The bands the checks hold rows of `source` and `content_type` to: the chunking bands, [quality]'s own, then
    its overrides for the content type, the source and "source.content_type" (the most specific last)."""
    q, c = quality, chunking
    out: dict[str, float] = {
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
    for key in (content_type, source, f"{source}.{content_type}"):
        out.update(q.overrides.get(key, {}))
    return out


def check_bands(quality: QualityConfig, chunking: ChunkingConfig) -> None:
    """Refuse bands no row could meet, as [quality] and each of its overrides resolve them: a floor over its
    ceiling, a share outside (0, 1], a health floor outside [0, 1] (every row would fail, or none could)."""
    for where in ["", *quality.overrides]:
        source, _, content_type = where.partition(".")
        b = bands(quality, chunking, source, content_type or source)
        named = f"quality.overrides.{where}" if where else "quality"
        for kind in ("parent", "abstract", "child"):
            low, high = b[f"{kind}_min_tokens"], b[f"{kind}_max_tokens"]
            if not 0 < low <= high:
                raise ValueError(f"{named}: need 0 < {kind}_min_tokens <= {kind}_max_tokens (got {low:g} and {high:g})")
        for share in ("parent_mostly", "abstract_mostly", "child_mostly", "health_mostly"):
            if not 0 < b[share] <= 1:
                raise ValueError(f"{named}: {share} is a share of the rows, in (0, 1] (got {b[share]:g})")
        if not 0 <= b["health_min"] <= 1:
            raise ValueError(f"{named}: health_min is a chunk health score, in [0, 1] (got {b['health_min']:g})")
