"""Whether flow runs go to a Prefect server: the one answer the no-op check (flows/noop.py) and the writer slot
(flows/concurrency.py) both read."""

from __future__ import annotations

import os
import sys


def prefect_api_configured() -> bool:
    """Whether a Prefect server is configured (PREFECT_API_URL), else a flow run starts a temporary one.

    The environment is read first; Prefect's own settings (a profile, a temporary setting) only once Prefect is
    imported: importing it just to ask costs seconds, more than the whole no-op check that asks before a run."""
    if os.environ.get("PREFECT_API_URL"):
        return True
    if "prefect" not in sys.modules:
        return False
    from prefect.settings import PREFECT_API_URL

    return bool(PREFECT_API_URL.value())
