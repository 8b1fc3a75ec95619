"""The ingest and backfill flows: every configured source (or the one named) brought in line with the collection,
as a Prefect flow run. Each flow is flows/run.py's function of the same job, wrapped, not written again: one
signature, one docstring (the flow's description); in a flow run each step is a task run and the reports are
published as artifacts (flows/tasks.py PrefectHost).
"""

from __future__ import annotations

from prefect import flow

import cairn.flows  # noqa: F401  (Prefect defaults before Prefect is imported)
from cairn.flows.run import backfill, ingest

ingest_flow = flow(name="cairn-ingest")(ingest)
backfill_flow = flow(name="cairn-backfill")(backfill)
