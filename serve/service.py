"""One worker process's retrieval: its Retriever, opened lazily and reopened after the index failed, one question
at a time, and a deadline on every question so that a slow or vanished index answers 503, never a hang.

A Retriever holds one Milvus client and one encoder; the pipeline is CPU-bound (the encoder) or waits on the
index server, so a worker answers one question at a time and `cairn serve --workers N` runs N of them side by
side. A question waits for its turn at most `[serve] timeout_seconds`, in all; the thread of a question that
overran finishes (or fails) on its own and frees the turn, while the caller already has its 503.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from pymilvus.exceptions import MilvusException

from cairn.errors import RetrievalError, StoreError
from cairn.query import Principal, RetrievalResult, Retriever
from cairn.redact import redact
from cairn.schemas.config import CairnConfig
from cairn.serve.auth import Caller, Keyring, RateLimiter
from cairn.serve.feedback import FeedbackStore
from cairn.serve.metrics import ServiceMetrics

log = logging.getLogger("cairn.serve")
T = TypeVar("T")
INDEX_FAILURES = (RetrievalError, StoreError, MilvusException)
THREADS = 4  # questions waiting for the turn, each in its own thread, beside the one running


class Unavailable(Exception):
    """The index cannot answer now (unreachable, failing, or slower than the deadline): a 503 with this reason."""


@dataclass(frozen=True)
class Question:
    """What a caller asked, validated by the HTTP layer; the principal is the caller's, never the request's."""

    text: str
    k: int | None = None
    doc_tag: str | None = None
    as_of: Any = None
    filters: dict[str, Any] | None = None


class Service:
    def __init__(self, config: CairnConfig, retriever: Retriever | None = None) -> None:
        self.config = config
        self.keyring = Keyring(config.serve)
        self.limiter = RateLimiter()
        self.feedback = FeedbackStore(config.feedback_file, config.serve.feedback_keep_days)
        self.metrics = ServiceMetrics(self.feedback)
        self._retriever = retriever
        self._turn = threading.Lock()  # one question at a time through the Retriever
        self._threads = ThreadPoolExecutor(THREADS, thread_name_prefix="cairn-retrieve")

    # ---- run on the worker's threads, with a deadline -------------------------------------------------------
    async def answer(self, question: Question, caller: Caller) -> tuple[str, RetrievalResult]:
        """(query id, result) for the caller's question; Unavailable when the index cannot answer in time."""
        started = time.perf_counter()
        self.metrics.in_flight.inc()
        try:
            result = await self._in_time(lambda: self._retrieve(question, caller.principal))
        except Unavailable:
            self.metrics.failed(time.perf_counter() - started, index_down=True)
            raise
        finally:
            self.metrics.in_flight.dec()
        query_id = uuid.uuid4().hex
        self.metrics.answered(result, time.perf_counter() - started)
        self.feedback.record(query_id, caller.name, [(h.chunk_id, h.recall_injected) for h in result.hits])
        return query_id, result

    async def reachable(self) -> str:
        """The collection generation that serves now (Unavailable when the index does not answer)."""
        collection = await self._in_time(self._ping)
        self.metrics.index_up.set(1)
        return collection

    async def _in_time(self, work: Callable[[], T]) -> T:
        deadline = self.config.serve.timeout_seconds
        loop = asyncio.get_running_loop()
        try:
            return await asyncio.wait_for(loop.run_in_executor(self._threads, self._with_turn(work)), deadline)
        except TimeoutError:
            log.warning("a retrieval overran [serve] timeout_seconds = %s", deadline)
            raise Unavailable(f"the index did not answer within {deadline:g} s") from None

    def _with_turn(self, work: Callable[[], T]) -> Callable[[], T]:
        def run() -> T:
            if not self._turn.acquire(timeout=self.config.serve.timeout_seconds):
                raise TimeoutError  # the caller has had its 503 already
            try:
                return work()
            finally:
                self._turn.release()

        return run

    # ---- under the turn ---------------------------------------------------------------------------------------
    def _retrieve(self, question: Question, principal: Principal) -> RetrievalResult:
        retriever = self._open()
        try:
            return retriever.retrieve(
                question.text,
                principal,
                k=question.k,
                doc_tag=question.doc_tag,
                as_of=question.as_of,
                filters=question.filters,
            )
        except INDEX_FAILURES as exc:  # the Retriever already retried once on a fresh client: start over next time
            self._drop(retriever)
            raise Unavailable(self._reason(exc)) from None

    def _ping(self) -> str:
        retriever = self._open()
        try:
            return retriever.serving.ping()
        except INDEX_FAILURES as exc:
            self._drop(retriever)
            raise Unavailable(self._reason(exc)) from None

    def _open(self) -> Retriever:
        if self._retriever is None:
            try:
                self._retriever = Retriever.from_config(self.config)
            except INDEX_FAILURES as exc:
                raise Unavailable(self._reason(exc)) from None
        return self._retriever

    def _drop(self, retriever: Retriever) -> None:
        self._retriever = None
        try:
            retriever.close()
        except INDEX_FAILURES:
            pass

    @staticmethod
    def _reason(exc: BaseException) -> str:
        log.warning("index unavailable: %s: %s", type(exc).__name__, redact(str(exc)))
        first = redact(str(exc)).splitlines()[0] if str(exc) else type(exc).__name__
        return f"index unavailable: {first[:300]}"

    def close(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)
        with self._turn:
            if self._retriever is not None:
                self._retriever.close()
                self._retriever = None
        self.feedback.close()
