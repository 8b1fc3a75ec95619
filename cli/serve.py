"""`cairn serve`: the query module as an HTTP service (serve/app.py) on uvicorn, until SIGTERM or Ctrl-C.

One worker runs the app in this process; `--workers N` starts N processes (uvicorn's supervisor), each opening
its own Retriever on the same index (the embedded index through its shared server, or a Milvus server), with
their metrics summed through a scratch folder (prometheus_client's multiprocess mode). On SIGTERM uvicorn stops
accepting, lets the requests in flight finish (up to `[serve] timeout_seconds` + 5 s), then exits.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Annotated

import typer

from cairn.cli import output
from cairn.cli.exits import Outcome
from cairn.cli.options import ConfigOption, config_path, load


def serve(
    ctx: typer.Context,
    config: ConfigOption = None,
    host: Annotated[
        str | None, typer.Option("--host", help="address to listen on (default: [serve] host)", show_default=False)
    ] = None,
    port: Annotated[
        int | None,
        typer.Option("--port", help="port to listen on (default: [serve] port)", min=1, max=65535, show_default=False),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option("--workers", help="worker processes (default: [serve] workers)", min=1, show_default=False),
    ] = None,
) -> Outcome:
    """Serve retrieval over HTTP: POST /v1/retrieve, /v1/feedback, GET /healthz, /metrics (docs/service.md)."""
    import uvicorn

    settings = load(ctx, config)
    serve_config = settings.serve.model_copy(
        update={k: v for k, v in {"host": host, "port": port, "workers": workers}.items() if v is not None}
    )
    if not serve_config.principals:
        output.problem("cairn serve: no [[serve.principals]] in the configuration: every /v1 request will get 401")
    grace = int(serve_config.timeout_seconds) + 5
    if serve_config.workers == 1:
        from cairn.serve.app import create_app

        app = create_app(settings.model_copy(update={"serve": serve_config}))
        uvicorn.run(app, host=serve_config.host, port=serve_config.port, timeout_graceful_shutdown=grace)
        return Outcome.OK
    from cairn.schemas.config import resolve_config_path
    from cairn.serve.app import CONFIG_ENV

    scratch = tempfile.mkdtemp(prefix="cairn-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = scratch  # before any worker imports prometheus_client
    os.environ[CONFIG_ENV] = str(resolve_config_path(config_path(ctx, config)).resolve())
    try:
        uvicorn.run(
            "cairn.serve.app:from_environment",
            factory=True,
            host=serve_config.host,
            port=serve_config.port,
            workers=serve_config.workers,
            timeout_graceful_shutdown=grace,
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return Outcome.OK
