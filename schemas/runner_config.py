"""The `[runner]` table: where an ingest run's model work runs (flows/dask_runner.py reads it)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from cairn.schemas.source_config import _Strict


class RunnerConfig(_Strict):
    """Where the ingest and backfill runs of the `cairn` command run, and the Prefect task runner of flow runs
    (flows/dask_runner.py).

    With no Prefect API configured (PREFECT_API_URL, or Prefect's active profile) and kind = "thread", `cairn`
    runs an ingest in its own process without Prefect (flows/run.py InlineHost), unless local_prefect_server;
    otherwise the run is a Prefect flow run, reported to the configured API or to the local server.

    thread (default): Prefect's thread pool; everything runs in the flow process, one batch after the other
    (torch already uses every core of the machine).
    dask: the model work is sent to Dask workers. Each batch's texts that the embedding cache lacks are cut
    into `workers` slices, each a task that loads the model inside its worker (by name, once per worker
    process) and returns the vectors; reading the sources, chunking, the embedding cache and the Milvus
    writes stay in the flow process, so no client, credential or open file ever travels. `address =
    "tcp://host:8786"` joins an existing scheduler (its workers run Cairn's image); without it each run
    starts a local cluster of `workers` worker processes (`processes = false`: threads in the flow process).
    """

    kind: Literal["thread", "dask"] = Field(
        default="thread",
        description="thread: Prefect's thread pool in the flow process; dask: the model work goes to Dask workers",
    )
    address: str | None = None  # an existing Dask scheduler, e.g. "tcp://dask-scheduler:8786"
    workers: int = Field(default=2, ge=1)  # thread: pool size; dask: local workers and slices per batch
    threads_per_worker: int = Field(default=1, ge=1)  # local cluster only
    processes: bool = True  # local cluster only: worker processes (True) or threads of the flow process
    local_prefect_server: bool = Field(
        default=False,
        description="no Prefect API configured: false runs a `cairn` command's ingest in its own process without "
        "Prefect (the run report and the quality report are its record); true reports it to a local Prefect server "
        "that `cairn` starts and keeps warm (flows/prefect_server.py), so Prefect's UI on that PREFECT_HOME shows "
        'the runs. kind = "dask" always reports to one',
    )
    prefect_idle_seconds: float = Field(
        default=900.0,
        ge=0,
        description='the local Prefect server (local_prefect_server, or kind = "dask") stops this long after the '
        "last run (a run within that time finds it warm; flows/prefect_server.py)",
    )

    @model_validator(mode="after")
    def _address(self) -> RunnerConfig:
        if self.address is not None:
            if self.kind != "dask":
                raise ValueError('runner: address names a Dask scheduler; set kind = "dask" with it')
            if not self.address.startswith(("tcp://", "tls://", "ucx://", "inproc://")):
                raise ValueError(f"runner: address {self.address!r} must be a scheduler address like tcp://host:8786")
        return self
