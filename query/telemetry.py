"""The query's telemetry record: one JSON log record per question answered (`cairn.query` logger, INFO, event
`query`), holding the result's diagnostics, whether the pipeline ran or the cache answered (`"cache": "hit"`)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

log = logging.getLogger("cairn.query")


def log_query(tenant: str, diagnostics: Mapping[str, Any]) -> None:
    """The record of one answered question, for `tenant`."""
    log.info(json.dumps({"event": "query", "tenant": tenant, **diagnostics}, default=str))
