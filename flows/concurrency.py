"""One writer per index, however Cairn runs.

- Milvus Lite (the embedded default): the advisory lock file beside it (index/lock.py); Lite is a
  single-process engine, and the lock holds whatever Prefect does.
- A Milvus server, with a Prefect server configured (`PREFECT_API_URL`): a Prefect global concurrency limit
  of 1 named after the index (`cairn-writer-<uri and collection digest>`), created on first use. Runs on
  different machines or workers of one Prefect server then queue for the collection, and the limit shows in
  Prefect's UI with its holder.
- A Milvus server without a Prefect server (a one-off run from a shell): nothing to coordinate with.

A run that cannot have the index within its `wait_seconds` fails with IndexBusy (exit 2), as for Lite.

A run holds the slot only where it writes (`WriterSlot`): its setup (the generation it writes, the collection, the
alias), then per source the read of the source's ledger and, once the source is listed, its plan and writes; never
while a source lists. `wait_seconds` bounds the first take, whether the run starts at all; a run that has begun
then queues for each later take for as long as another run writes.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager

from cairn.errors import IndexBusy
from cairn.flows.prefect_api import prefect_api_configured
from cairn.index.lock import writer_lock
from cairn.schemas.config import MilvusConfig


def limit_name(config: MilvusConfig) -> str:
    """The Prefect limit of one index: a digest, so no URI (which may carry a host or a user) is shown."""
    digest = hashlib.sha256(f"{config.uri}\n{config.collection}".encode()).hexdigest()[:12]
    return f"cairn-writer-{config.collection.lower()}-{digest}"


# How long taking a slot that was just seen free may take: a hang guard for the server's round trips (seconds
# each on a loaded machine), never the wait for another run, which `wait_seconds` bounds.
ACQUIRE_SECONDS = 300.0


@contextmanager
def index_writer(config: MilvusConfig, wait_seconds: float = 0.0):
    """Hold the index's writer slot for the block (IndexBusy when another run keeps it past the wait)."""
    if config.is_lite or not prefect_api_configured():
        with writer_lock(config, wait_seconds):
            yield
        return
    from prefect.concurrency.sync import concurrency

    name = limit_name(config)
    busy = IndexBusy(
        f"collection {config.collection!r} is being written by another Cairn run (Prefect concurrency "
        f"limit {name}); wait for it to finish, or pass --wait SECONDS to queue behind it"
    )
    if not _wait_for_a_free_slot(name, wait_seconds):
        raise busy
    try:  # free a moment ago: a timeout now means another run took it in between
        slot = concurrency(name, occupy=1, timeout_seconds=ACQUIRE_SECONDS, strict=True)
        slot.__enter__()
    except TimeoutError:
        raise busy from None
    try:
        yield
    finally:
        slot.__exit__(None, None, None)


def _wait_for_a_free_slot(name: str, wait_seconds: float) -> bool:
    """Whether the limit (created on first use) has a free slot, looking until `wait_seconds` have passed.

    Prefect's own acquisition timeout also bounds its HTTP round trips, which a loaded machine stretches past
    a short wait: a run alone then failed as busy. So the wait is for a free slot, seen by reading the limit."""
    from prefect.client.orchestration import get_client

    deadline = time.monotonic() + wait_seconds
    with get_client(sync_client=True) as client:
        limit = _read_or_create_limit(client, name)
        while limit.active_slots >= limit.limit:
            if time.monotonic() >= deadline:
                return False
            time.sleep(min(1.0, max(deadline - time.monotonic(), 0.0)))
            limit = client.read_global_concurrency_limit_by_name(name)
    return True


def _read_or_create_limit(client, name: str):
    """The limit, created (1 slot) unless the server has it; an operator may have created or resized it."""
    from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate
    from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound

    try:
        return client.read_global_concurrency_limit_by_name(name)
    except ObjectNotFound:
        try:
            client.create_global_concurrency_limit(GlobalConcurrencyLimitCreate(name=name, limit=1))
        except ObjectAlreadyExists:  # another run created it meanwhile
            pass
        return client.read_global_concurrency_limit_by_name(name)


class WriterSlot:
    """The index's writer slot as one run takes it, in turns: only around what writes (module doc)."""

    def __init__(self, config: MilvusConfig, wait_seconds: float = 0.0) -> None:
        self.config = config
        self.wait_seconds = wait_seconds
        self.taken = 0  # turns this run has had

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the slot for the block: the first time within `wait_seconds` (IndexBusy past it), later on as soon
        as the run writing now ends its turn."""
        with index_writer(self.config, self.wait_seconds if not self.taken else math.inf):
            self.taken += 1
            yield
