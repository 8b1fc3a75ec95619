"""The HTTP service (FastAPI on uvicorn): `POST /v1/retrieve`, `POST /v1/feedback`, `GET /healthz`, `GET /metrics`,
`GET /openapi.json` and `/docs`, and the MCP tool at `/mcp` (serve/mcp_http.py). docs/service.md is the
reference; this module is the only place routes live.

Every error is a JSON object `{"error": "<one line>"}` with a 4xx or 503 status: never a traceback, never the key.
The caller's tenant and groups come from its key (serve/auth.py); a body naming them is refused.
"""

# no `from __future__ import annotations`: FastAPI reads the endpoints' annotations, and /v1/retrieve's body
# model is built per configuration (its limits are the configured ones, and /openapi.json shows them)

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, nullcontext
from pathlib import Path
from typing import Any, cast

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPBearer
from pydantic import BaseModel, ConfigDict, Field, StrictInt, create_model
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cairn.errors import UsageError
from cairn.query.answers import result_json
from cairn.schemas.config import CairnConfig, ServeConfig, load_config, resolve_config_path
from cairn.serve.auth import Caller, retry_after
from cairn.serve.errors import ScrapesWaiting, Unavailable, one_line
from cairn.serve.mcp_http import mcp_endpoint
from cairn.serve.reload import PrincipalsReloader, ignore_hup_until_ready
from cairn.serve.service import Question, Service

log = logging.getLogger("cairn.serve")
PRINCIPAL_FIELDS = {"tenant", "tenant_id", "groups", "group", "principal", "acl", "access_control_list"}
GUARDED = ("/v1/", "/mcp")  # the paths a key opens
METRICS_TYPE = "text/plain; version=0.0.4; charset=utf-8"  # Prometheus's text format
CONFIG_ENV = "CAIRN_SERVE_CONFIG"  # how `cairn serve --workers N` hands each worker process its configuration


class RetrieveRequest(BaseModel):
    """POST /v1/retrieve's body (the limits below are replaced by the configured ones: request_models)."""

    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, description="the question")
    k: StrictInt | None = Field(default=None, ge=1, description="sections to return (default: [query] k)")
    doc_tag: str | None = Field(default=None, max_length=512, description="only this document family")
    as_of: str | StrictInt | None = Field(
        default=None, description="what was valid then: an ISO date or date-time (UTC unless it says), or epoch s"
    )
    filters: dict[str, str | list[str]] | None = Field(
        default=None, description='metadata filter, e.g. {"service_name": "ledger-db"}'
    )
    explain: bool = Field(default=False, description="add the per-stage diagnostics")


class FeedbackRequest(BaseModel):
    """POST /v1/feedback's body."""

    model_config = ConfigDict(extra="forbid")
    query_id: str = Field(min_length=1, max_length=64, description="the query_id of the answer")
    chunk_id: str = Field(min_length=1, max_length=128, description="the chunk_id of a section it returned")
    useful: bool = Field(description="whether that section helped")


def request_model(limits: ServeConfig) -> type[RetrieveRequest]:
    """RetrieveRequest with the configured limits (what /openapi.json shows is what is enforced)."""
    return create_model(
        "RetrieveRequest",
        __base__=RetrieveRequest,
        query=(str, Field(min_length=1, max_length=limits.max_query_chars, description="the question")),
        k=(StrictInt | None, Field(default=None, ge=1, le=limits.max_k, description="sections to return ([query] k)")),
    )


class BodyLimit:
    """Refuses a request body over `limit` bytes with 413, before it is parsed (declared or streamed)."""

    def __init__(self, app: ASGIApp, limit: int, refused: Callable[[], None]) -> None:
        self.app, self.limit, self.refused = app, limit, refused

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.limit:
            self.refused()
            await JSONResponse(self._reason(), status_code=413)(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                self.refused()
                raise HTTPException(413, self._reason()["error"])
            return message

        await self.app(scope, counted, send)

    def _reason(self) -> dict[str, str]:
        return {"error": f"request body over [serve] max_body_bytes = {self.limit}"}


class KeyCheck:
    """Authenticates every /v1/ request from its Authorization header, before its body is read (no key: 401;
    over the key's rate: 429), and hands the caller to the route in the request's state."""

    def __init__(self, app: ASGIApp, service: Service) -> None:
        self.app, self.service = app, service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == "/metrics" and scope["method"] == "GET":
            # answered here, before the app's own layers: what a client looping on /metrics costs stays small
            try:
                reply: Response = Response(await self.service.exposition(), media_type=METRICS_TYPE)
            except ScrapesWaiting as exc:
                reply = JSONResponse({"error": str(exc)}, status_code=429, headers={"Retry-After": "1"})
            await reply(scope, receive, send)
            return
        if scope["type"] != "http" or not scope["path"].startswith(GUARDED):
            await self.app(scope, receive, send)
            return
        given = [value for name, value in scope.get("headers") or [] if name == b"authorization"]
        found = self.service.keyring.caller(given[0]) if len(given) == 1 else None  # two: which one would count?
        metrics = self.service.metrics
        if found is None:
            metrics.reject("unauthorized")
            await unauthorized()(scope, receive, send)
            return
        wait = self.service.limiter.wait_seconds(found)
        if wait:
            metrics.reject("rate_limited")
            refusal = JSONResponse(
                {"error": f"rate limit of {found.rate_per_minute}/minute reached for {found.name}"},
                status_code=429,
                headers={"Retry-After": retry_after(wait)},
            )
            await refusal(scope, receive, send)
            return
        scope.setdefault("state", {})["caller"] = found
        await self.app(scope, receive, send)


def unauthorized() -> JSONResponse:
    return JSONResponse(
        {"error": "a valid bearer key is required (one Authorization: Bearer header)"},
        status_code=401,
        headers={"WWW-Authenticate": "Bearer"},
    )


def _one_line(exc: RequestValidationError) -> str:
    """The validation error a person should read first, on one line: a body naming a principal before anything
    else, then the first error, where and what. Names the client chose are quoted and cut short."""
    errors = list(exc.errors())
    if not errors:
        return "invalid request"
    for error in errors:
        loc = [str(p) for p in error.get("loc", ()) if p != "body"]
        if error.get("type") == "extra_forbidden" and loc and loc[0] in PRINCIPAL_FIELDS:
            return f"{loc[0]}: a request may not name a tenant or groups; they come from the caller's key"
    first = errors[0]
    if first.get("type") == "json_invalid":
        return "the body is not valid JSON"
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
    if first.get("type") == "extra_forbidden":
        where = repr(where[:60])
    return " ".join(f"{where}: {first.get('msg', 'invalid')}".split())[:300]


def create_app(config: CairnConfig, service: Service | None = None, source: Path | None = None) -> FastAPI:
    """The service for `config` (a Service over a given Retriever may be passed in, as tests do). `source`: the
    file `config` was read from, whose principals are re-read on SIGHUP and when it changes (serve/reload.py)."""
    owned = service is None
    service = service or Service(config)
    retrieve_model = request_model(config.serve)
    reloader = PrincipalsReloader(source, service.keyring, service.metrics) if source is not None else None

    mcp_app, mcp_running = mcp_endpoint(service)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await asyncio.to_thread(service.warm)  # the encoder loads before the first question, not during it
        async with mcp_running(), reloader.running() if reloader else nullcontext():
            yield
        if owned:
            service.close()
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):  # this worker's live gauges leave the sums
            from prometheus_client import multiprocess

            multiprocess.mark_process_dead(os.getpid())

    app = FastAPI(
        title="Cairn",
        summary="Hybrid retrieval over an organisation's knowledge, scoped to the caller's key",
        lifespan=lifespan,
    )
    app.add_middleware(
        BodyLimit, limit=config.serve.max_body_bytes, refused=lambda: service.metrics.reject("too_large")
    )
    bearer = HTTPBearer(auto_error=False, description="a key whose SHA-256 is in [[serve.principals]]")

    app.add_middleware(KeyCheck, service=service)  # added last: runs first, before the body is read or parsed

    async def caller(request: Request, _shown: object = Depends(bearer)) -> Caller:
        """The caller KeyCheck authenticated (`bearer` only puts the scheme in /openapi.json); 401 if none did."""
        found = (request.scope.get("state") or {}).get("caller")
        if not isinstance(found, Caller):
            raise HTTPException(401, "a valid bearer key is required", headers={"WWW-Authenticate": "Bearer"})
        return found

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(Exception)
    async def bug(_request: Request, exc: Exception) -> JSONResponse:  # its traceback goes to the log, not the caller
        service.metrics.error()
        log.error("internal error: %s", type(exc).__name__, exc_info=exc)
        return JSONResponse({"error": "internal error (its traceback is in the service's log)"}, status_code=500)

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        service.metrics.reject("invalid")
        return JSONResponse({"error": _one_line(exc)}, status_code=422)

    @app.post("/v1/retrieve", summary="Sections for a question, packed and cited, as the caller may read them")
    async def retrieve(body: retrieve_model, who: Caller = Depends(caller)) -> dict[str, Any]:  # type: ignore[valid-type]  # noqa: B008
        body = cast(RetrieveRequest, body)
        question = Question(body.query, body.k, body.doc_tag, body.as_of, body.filters)
        try:
            query_id, result = await service.answer(question, who)
        except UsageError as exc:  # a caller's value (counted `invalid` by the service): its error, never the index's
            raise HTTPException(400, one_line(str(exc))) from None
        except Unavailable as exc:
            raise HTTPException(503, one_line(str(exc)), headers={"Retry-After": "5"}) from None
        data = result_json(result)
        if not body.explain:
            data.pop("diagnostics")
        return {"query_id": query_id, **data}

    @app.post("/v1/feedback", summary="Mark one returned section useful or not (the feedback rates in /metrics)")
    async def feedback(body: FeedbackRequest, who: Caller = Depends(caller)) -> dict[str, Any]:  # noqa: B008
        injected = await service.mark(body.query_id, body.chunk_id, who, body.useful)
        if injected is None:
            raise HTTPException(404, "no such section in an answer to this key (or it is older than the window)")
        service.metrics.marked(injected, body.useful)
        return {"recorded": True, "recall_injected": injected}

    @app.get("/healthz", summary="Whether the index answers (no key needed)")
    async def healthz() -> JSONResponse:
        reachable, serving = await service.health()
        if not reachable:  # the reason stays in the log: this endpoint answers anyone
            return JSONResponse({"status": "unavailable", "index": "unreachable"}, status_code=503)
        return JSONResponse(
            {"status": "ok", "index": "reachable", "collection": config.milvus.collection, "serving": serving}
        )

    app.add_route("/mcp", mcp_app, methods=["GET", "POST", "DELETE"])  # the MCP tool, behind the same keys

    @app.get("/metrics", summary="Prometheus text format", response_class=Response)
    async def metrics() -> Response:
        return Response(await service.exposition(), media_type=METRICS_TYPE)

    return app


def from_environment() -> FastAPI:
    """uvicorn's app factory in each worker of `cairn serve --workers N` (the config path in $CAIRN_SERVE_CONFIG)."""
    ignore_hup_until_ready()
    path = resolve_config_path(os.environ.get(CONFIG_ENV))
    return create_app(load_config(path), source=path)
