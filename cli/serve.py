"""`cairn serve`: the query module as an HTTP service (serve/app.py) on uvicorn, until SIGTERM or Ctrl-C;
`cairn new-key`, a caller's key; `cairn export-query-model`, the query encoder a `cairn[query]` service runs
(embedding/query_model.py).

One worker runs the app in this process; `--workers N` starts N processes (uvicorn's supervisor), each opening
its own Retriever on the same index (the embedded index through its shared server, or a Milvus server), with
their metrics summed through a scratch folder (prometheus_client's multiprocess mode). On SIGTERM uvicorn stops
accepting, lets the requests in flight finish (up to `[serve] timeout_seconds` + 5 s), then exits.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from cairn.cli import output
from cairn.cli.exits import Outcome
from cairn.cli.options import ConfigOption, JsonOption, config_path, load
from cairn.printable import printable

if TYPE_CHECKING:
    import uvicorn


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
    from cairn.schemas.config import resolve_config_path

    source = resolve_config_path(config_path(ctx, config)).resolve()  # its principals are re-read (SIGHUP, edits)
    if serve_config.workers == 1:
        from cairn.serve.app import create_app

        app = create_app(settings.model_copy(update={"serve": serve_config}), source=source)
        uvicorn.run(app, host=serve_config.host, port=serve_config.port, timeout_graceful_shutdown=grace)
        return Outcome.OK
    from cairn.serve.app import CONFIG_ENV

    scratch = tempfile.mkdtemp(prefix="cairn-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = scratch  # before any worker imports prometheus_client
    os.environ[CONFIG_ENV] = str(source)
    try:
        supervise(
            uvicorn.Config(
                "cairn.serve.app:from_environment",
                factory=True,
                host=serve_config.host,
                port=serve_config.port,
                workers=serve_config.workers,
                timeout_graceful_shutdown=grace,
            )
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return Outcome.OK


def supervise(config: uvicorn.Config) -> None:
    """uvicorn's supervisor of `config.workers` processes (what `uvicorn.run` starts for them), except on SIGHUP:
    uvicorn restarts every worker, which with a configuration that no longer loads would leave none; here each
    worker is sent the SIGHUP and re-reads its principals itself, keeping the last good ones (serve/reload.py)."""
    import signal

    from uvicorn.supervisors.multiprocess import Multiprocess

    class Supervisor(Multiprocess):
        def handle_hup(self) -> None:
            for worker in self.processes:
                if worker.pid is not None:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(worker.pid, signal.SIGHUP)

    with contextlib.suppress(KeyboardInterrupt):  # as uvicorn.run: Ctrl-C ends the supervisor quietly
        Supervisor(config, sockets=[config.bind_socket()]).run()


def new_key(
    name: Annotated[str, typer.Option("--name", help="who holds the key (logs and metrics name it)")],
    tenant: Annotated[str, typer.Option("--tenant", help="the tenant every answer to the key is scoped to")],
    group: Annotated[list[str], typer.Option("--group", help="a group of the caller (repeatable)")],
    key_file: Annotated[
        Path | None,
        typer.Option("--key-file", help="write the key here (mode 600) instead of stderr", show_default=False),
    ] = None,
) -> Outcome:
    """Make a bearer key for `cairn serve`: its [[serve.principals]] entry on stdout (append it to the config),
    the key itself once, on stderr or into --key-file. Only the key's SHA-256 is ever in the configuration."""
    from pydantic import ValidationError

    from cairn.errors import UsageError
    from cairn.schemas.config import ServePrincipal

    key = "cairn_" + secrets.token_urlsafe(32)
    try:
        entry = ServePrincipal(
            name=name, key_sha256=hashlib.sha256(key.encode()).hexdigest(), tenant=tenant, groups=group
        )
    except ValidationError as exc:
        raise UsageError(f"new-key: {exc.errors()[0]['msg']}") from None
    if key_file is not None:
        try:
            descriptor = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            raise UsageError(f"new-key: {key_file} exists; a key file is never overwritten") from None
        with os.fdopen(descriptor, "w") as handle:
            handle.write(key + "\n")
    else:
        output.note(f"the key for {name} (shown once; only its hash is kept): {key}")
    output.line("\n[[serve.principals]]")
    output.line(f"name = {toml_string(entry.name)}")
    output.line(f"key_sha256 = {toml_string(entry.key_sha256)}")
    output.line(f"tenant = {toml_string(entry.tenant)}")
    output.line(f"groups = [{', '.join(toml_string(g) for g in entry.groups)}]")
    return Outcome.OK


def export_query_model(
    ctx: typer.Context,
    folder: Annotated[
        Path, typer.Argument(help="the folder to write (model.onnx, tokenizer.json, cairn-query-model.json)")
    ],
    config: ConfigOption = None,
    as_json: JsonOption = False,
) -> Outcome:
    """Export the configured encoder for services installed with `cairn[query]` (no torch), and the configured
    reranker when `[query] steps.rerank` is on: copy the folder to the service and set `[embedding] query_model`
    (or $CAIRN_QUERY_MODEL) to it."""
    from cairn.embedding import encoder_for
    from cairn.embedding.query_model import export_query_model as export

    cfg = load(ctx, config)
    encoder = encoder_for(cfg.embedding)
    reranker = cfg.query.rerank_model if cfg.query.enabled("rerank") else None
    export(encoder, folder, reranker)
    if as_json:
        output.print_json(
            {"folder": str(folder), "identity": encoder.identity, "dim": encoder.dim, "reranker": reranker}
        )
    else:
        output.line(
            f"query model for {encoder.identity}{f' and reranker {reranker}' if reranker else ''} written to {folder}"
        )
    return Outcome.OK


def toml_string(value: str) -> str:
    """`value` as a TOML basic string that always loads back to `value`: characters outside the BMP written as
    themselves (JSON's surrogate-pair escapes are no TOML), quote and backslash escaped, and every character a
    terminal would act on (controls, C1, separators, bidirectional overrides) as a \\uXXXX escape, which TOML
    reads back and cairn/printable.py leaves alone. A lone surrogate has no TOML form: the principal refuses it."""
    out = []
    for char in value:
        if char in '"\\':
            out.append("\\" + char)
        elif printable(char) != char:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'
