"""The ingest and backfill flows: every configured source (or the one named) brought in line with the collection,
as a Prefect flow run: flows/run.py's `ingest` and `backfill`, each step a task run of the flow run, the reports
published as artifacts (flows/tasks.py PrefectHost).
"""

from __future__ import annotations

from prefect import flow

import cairn.flows  # noqa: F401  (Prefect defaults before Prefect is imported)
from cairn.flows.options import Cleanup
from cairn.flows.run import backfill, ingest


@flow(name="cairn-ingest")
def ingest_flow(
    config_path: str | None = None,
    source: str | None = None,
    cleanup: Cleanup | None = None,
    wait_seconds: float = 0.0,
    allow_mass_delete: bool = False,
    listing_failed: dict[str, str] | None = None,
) -> dict:
    """Bring the collection in line with the configured sources (all, or the one named). The run fails when a
    source fails as a whole (after the others ran); documents that fail are in the report. `listing_failed`: the
    sources whose listing failed in the CLI's no-op check just before (flows/noop.py), and why: they fail with
    that reason, not listed a second time."""
    return ingest(config_path, source, cleanup, wait_seconds, allow_mass_delete, listing_failed)


@flow(name="cairn-backfill")
def backfill_flow(
    config_path: str | None = None,
    source: str | None = None,
    since: str | None = None,
    until: str | None = None,
    commits: int | None = None,
    wait_seconds: float = 0.0,
) -> dict:
    """Re-process the documents updated in [since, until) (either end open; neither: all of them) through the
    ingest path, idempotently; with keep_history, past versions in the window (or written by the last
    `commits` commits) too, for sources that have them."""
    return backfill(config_path, source, since, until, commits, wait_seconds)
