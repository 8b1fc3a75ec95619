"""The `[metrics]` table: where an ingest or backfill run pushes its figures (flows/metrics_push.py reads it).

A batch job is gone before Prometheus could scrape it, so each run pushes to a Prometheus Pushgateway when
`pushgateway_url` is set, one group per source; nothing is pushed when it is not. The query service's metrics
are scraped instead (`cairn serve`, GET /metrics: docs/service.md).
"""

from __future__ import annotations

from pydantic import Field, field_validator

from cairn.schemas.source_config import _Strict


class MetricsConfig(_Strict):
    """Metrics of ingest runs: pushed to a Pushgateway when one is configured (docs/operations.md)."""

    pushgateway_url: str = ""  # e.g. http://pushgateway:9091; empty = push nothing
    job: str = Field(default="cairn_ingest", min_length=1, max_length=128)  # the Pushgateway job of every push
    timeout_seconds: float = Field(default=10.0, gt=0, le=300)  # per push; a failed push is a warning, never a failure

    @field_validator("pushgateway_url")
    @classmethod
    def _url(cls, value: str) -> str:
        if value and not value.startswith(("http://", "https://")):
            raise ValueError(f"pushgateway_url {value!r} must be an http(s):// URL (or empty: no push)")
        return value.rstrip("/")
