"""Whether flow runs go to a Prefect server: the one answer the no-op check (flows/noop.py) and the writer slot
(flows/concurrency.py) both read."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

_LOCAL: set[str] = set()  # API URLs of the local Prefect server this process's runs report to now


def prefect_api_configured() -> bool:
    """Whether a Prefect server is configured (PREFECT_API_URL), else a flow run reports to a server of its own:
    Prefect's temporary one, or the CLI's local one (flows/prefect_server.py), which is not a configured server
    either (it coordinates no other machine, and frees no concurrency slot a killed run held).

    The environment is read first; Prefect's own settings (a profile, a temporary setting) only once Prefect is
    imported: importing it just to ask costs seconds, more than the whole no-op check that asks before a run."""
    if os.environ.get("PREFECT_API_URL"):
        return True
    if "prefect" not in sys.modules:
        return False
    from prefect.settings import PREFECT_API_URL

    configured = PREFECT_API_URL.value()
    return bool(configured) and configured not in _LOCAL


@contextmanager
def reporting_to_local(url: str) -> Iterator[None]:
    """For the block, `url` (the local server, set as PREFECT_API_URL by the caller) counts as no configured API."""
    _LOCAL.add(url)
    try:
        yield
    finally:
        _LOCAL.discard(url)
