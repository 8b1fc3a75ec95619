"""One worker process's retrieval: its Retriever, opened at start and reopened after the index failed, one
question at a time, and a deadline on every question so that a slow or vanished index answers 503, never a hang.

A Retriever holds one Milvus client and one encoder and is not safe to share between threads, so a worker
answers one question at a time (its turn) and `cairn serve --workers N` runs N side by side. Each question runs
on a daemon thread of its own and has `[serve] timeout_seconds` in all, from its arrival: waiting for the turn
past that is `busy` (the index is fine, the worker is full), running past it is a slow index. At most
MAX_WAITING questions wait at once; more are refused at once as busy. A question whose caller already had its
503 never starts: the deadline is checked again once the turn is held.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from cairn.errors import UsageError, index_down
from cairn.query import Principal, RetrievalResult, Retriever
from cairn.query.filters import as_epoch, check_question, search_filter
from cairn.redact import redact
from cairn.schemas.config import CairnConfig
from cairn.serve.auth import Caller, Keyring, RateLimiter
from cairn.serve.errors import Busy, ScrapesWaiting, Unavailable
from cairn.serve.feedback import FeedbackStore
from cairn.serve.metrics import ServiceMetrics

log = logging.getLogger("cairn.serve")
T = TypeVar("T")
MAX_WAITING = 64  # questions of one worker waiting for their turn; beyond that, refused as busy at once
REOPEN_SECONDS = 2.0  # after a failed open, the next attempt waits this long (the failure is answered meanwhile)
HEALTH_SECONDS = 2.0  # a health answer is reused this long; a check waits at most this long for the turn
SCRAPE_REUSE_SECONDS = 1.0  # a scrape's text is reused this long while this worker's metrics did not change
SCRAPE_INTERVAL_SECONDS = 0.1  # one scrape answered per this long per worker at most; sooner ones wait their turn
MAX_SCRAPES_WAITING = 32  # scrapes waiting at once; more are answered 429 at once


@dataclass(frozen=True)
class Question:
    """What a caller asked, validated by the HTTP layer; the principal is the caller's, never the request's."""

    text: str
    k: int | None = None
    doc_tag: str | None = None
    as_of: Any = None
    filters: dict[str, Any] | None = None


def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.done():  # the caller stopped waiting (its deadline): nothing to hand over
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


class Service:
    def __init__(self, config: CairnConfig, retriever: Retriever | None = None, feedback: bool = True) -> None:
        """`feedback`: record every answer for POST /v1/feedback (the HTTP service; `cairn mcp` records none)."""
        self.config = config
        self.timeout = config.serve.timeout_seconds
        self.keyring = Keyring(config.serve)
        self.limiter = RateLimiter()
        self.feedback = FeedbackStore(config.feedback_file, config.serve.feedback_keep_days) if feedback else None
        self.metrics = ServiceMetrics(self.feedback)
        self._retriever = retriever
        self._turn = threading.Lock()  # one question at a time through the Retriever
        self._waiting = threading.BoundedSemaphore(MAX_WAITING)
        self._closed = False
        self._open_failed: tuple[float, str] | None = None  # (when, why) of the last failed open
        self._health: tuple[float, bool, str] | None = None  # (when, reachable, serving collection or reason)
        self._health_lock = asyncio.Lock()
        self._scrape_lock = asyncio.Lock()
        self._scraped: tuple[int, float, bytes] | None = None  # (metrics version, when, text) of the last scrape
        self._scrape_at = float("-inf")  # when the last scrape was answered
        self._scrapes_waiting = 0

    # ---- what the routes call ---------------------------------------------------------------------------------
    async def answer(self, question: Question, caller: Caller) -> tuple[str, RetrievalResult]:
        """(query id, result) for the caller's question, on every transport. UsageError (a caller's error, counted
        `invalid`, never the index's) when the question is over the `[serve]` limits or holds a value the engine
        cannot take; Unavailable (Busy) when it cannot be answered in time."""
        try:
            self.admit(question, caller)
        except UsageError:
            self.metrics.reject("invalid")
            raise
        started = time.perf_counter()
        self.metrics.flight(+1)
        try:
            result = await self._in_time(lambda: self._retrieve(question, caller.principal))
        except Unavailable as exc:
            self.metrics.failed(time.perf_counter() - started, exc)
            raise
        except UsageError:  # the retriever's own checks: still the caller's
            self.metrics.reject("invalid")
            raise
        finally:
            self.metrics.flight(-1)
        query_id = uuid.uuid4().hex
        seconds = time.perf_counter() - started
        self.metrics.answered(result, seconds)
        await asyncio.to_thread(self._record, query_id, caller.name, result)
        log.info("answered %s for %s: %s in %.0f ms", query_id, caller.name, result.status, seconds * 1000)
        return query_id, result

    def admit(self, question: Question, caller: Caller) -> None:
        """The question within the `[serve]` limits and every value in it as the engine needs it, checked before
        it waits for a turn (query/filters.py's checks, the ones the Retriever applies): UsageError of one line."""
        limits, chars = self.config.serve, len(question.text)
        if chars > limits.max_query_chars:
            raise UsageError(
                f"query: at most {limits.max_query_chars} characters ([serve] max_query_chars), got {chars}"
            )
        if question.k is not None and not 1 <= question.k <= limits.max_k:
            raise UsageError(f"k: a whole number from 1 to {limits.max_k} ([serve] max_k), got {question.k}")
        check_question(question.text)
        search_filter(caller.principal, as_epoch(question.as_of), question.doc_tag, question.filters)

    async def mark(self, query_id: str, chunk_id: str, caller: Caller, useful: bool) -> bool | None:
        if self.feedback is None:
            return None
        return await asyncio.to_thread(self.feedback.mark, query_id, chunk_id, caller.name, useful)

    async def exposition(self) -> bytes:
        """The metrics text, paced: one scrape at a time, at most one every SCRAPE_INTERVAL_SECONDS per worker (a
        scrape arriving sooner waits, which costs nothing: Prometheus scrapes every 15 s or so), and a scrape
        that finds this worker's metrics unchanged since the last text, built less than SCRAPE_REUSE_SECONDS
        ago, gets that text (what other workers and the feedback rates changed meanwhile shows within that
        time). So clients looping on /metrics, however many, cost a worker a few scrapes a second. ScrapesWaiting
        when MAX_SCRAPES_WAITING already wait (answered 429)."""
        if self._scrapes_waiting >= MAX_SCRAPES_WAITING:
            raise ScrapesWaiting(f"{MAX_SCRAPES_WAITING} scrapes of /metrics are waiting: try again shortly")
        self._scrapes_waiting += 1
        try:
            async with self._scrape_lock:
                pause = self._scrape_at + SCRAPE_INTERVAL_SECONDS - time.monotonic()
                if pause > 0:
                    await asyncio.sleep(pause)
                version, now = self.metrics.version, time.monotonic()
                self._scrape_at = now
                if self._scraped and self._scraped[0] == version and now - self._scraped[1] < SCRAPE_REUSE_SECONDS:
                    return self._scraped[2]
                text = await asyncio.to_thread(self.metrics.exposition)  # the feedback rates read SQLite
                self._scraped = (version, now, text)
                return text
        finally:
            self._scrapes_waiting -= 1

    async def health(self) -> tuple[bool, str]:
        """(reachable, the collection generation serving or why not), asked at most every HEALTH_SECONDS: never
        more than one check at a time, and a busy worker is alive (it is answering)."""
        async with self._health_lock:
            if self._health and time.monotonic() - self._health[0] < HEALTH_SECONDS:
                return self._health[1], self._health[2]
            try:
                reachable, said = True, await self._in_time(self._probe, waits=False)
            except Unavailable as exc:
                reachable, said = False, str(exc)
            self._health = (time.monotonic(), reachable, said)
            self.metrics.index(reachable)
            return reachable, said

    def warm(self) -> None:
        """Open the Retriever (the encoder loads) before the first question, if the index is there."""
        try:
            with self._turn:
                self._open()
        except Unavailable as exc:
            log.warning("%s; the service starts and answers 503 until it is", exc)

    def close(self) -> None:
        self._closed = True
        if self._turn.acquire(timeout=5):  # a question stuck in the index must not hold the shutdown
            try:
                if self._retriever is not None:
                    self._retriever.close()
                    self._retriever = None
            finally:
                self._turn.release()
        else:
            log.warning("a question still holds the index at shutdown: its Retriever is left to the exit")
        if self.feedback is not None:
            self.feedback.close()

    # ---- threads and deadlines --------------------------------------------------------------------------------
    async def _in_time(self, work: Callable[[], T], waits: bool = True) -> T:
        """`work` on a daemon thread of its own, given its turn, within the deadline."""
        deadline = time.monotonic() + self.timeout
        if waits and not self._waiting.acquire(blocking=False):
            raise Busy(f"the service is busy ({MAX_WAITING} questions waiting in this worker): try again shortly")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        started = threading.Event()  # set once the question holds its turn: past the deadline, busy or slow

        def run() -> None:
            value, error = None, None
            try:
                value = self._with_turn(work, deadline, started) if waits else work()
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting coroutine, raised there
                error = exc
            finally:
                if waits:
                    self._waiting.release()
            try:
                loop.call_soon_threadsafe(_settle, future, value, error)
            except RuntimeError:  # the loop has ended (shutdown) while this overran: no one is waiting
                pass

        threading.Thread(target=run, name="cairn-retrieve", daemon=True).start()
        try:
            return await asyncio.wait_for(future, self.timeout)
        except TimeoutError:
            if waits and not started.is_set():  # still waiting for the turn: the worker is full, not the index slow
                raise Busy(f"the service is busy: no turn within {self.timeout:g} s") from None
            log.warning("a question overran [serve] timeout_seconds = %g", self.timeout)
            raise Unavailable(f"the index did not answer within {self.timeout:g} s") from None

    def _with_turn(self, work: Callable[[], T], deadline: float, started: threading.Event) -> T:
        if not self._turn.acquire(timeout=max(0.0, deadline - time.monotonic())):
            raise Busy(f"the service is busy: no turn within {self.timeout:g} s")
        try:
            if time.monotonic() >= deadline:  # its caller has had its 503: do not run it for nobody
                raise Busy(f"the service is busy: no turn within {self.timeout:g} s")
            if self._closed:
                raise Unavailable("the service is stopping")
            started.set()
            return work()
        finally:
            self._turn.release()

    # ---- under the turn -----------------------------------------------------------------------------------------
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
        except Exception as exc:  # the Retriever already retried once on a fresh client: start over next time
            if not index_down(exc):  # a caller's error, refused data or a bug: not the index being down
                raise
            self._drop(retriever)
            raise Unavailable(self._reason(exc), index_down=True) from None

    def _probe(self) -> str:
        """The serving generation, asked of the index (waiting at most HEALTH_SECONDS for the turn)."""
        if not self._turn.acquire(timeout=HEALTH_SECONDS):
            return "busy"  # answering questions: the index answered the last one
        try:
            retriever = self._open()
            try:
                return retriever.serving.ping()
            except Exception as exc:
                if not index_down(exc):  # a caller's error, refused data or a bug: not the index being down
                    raise
                self._drop(retriever)
                raise Unavailable(self._reason(exc), index_down=True) from None
        finally:
            self._turn.release()

    def _open(self) -> Retriever:
        if self._retriever is not None:
            return self._retriever
        if self._closed:
            raise Unavailable("the service is stopping")
        if self._open_failed and time.monotonic() - self._open_failed[0] < REOPEN_SECONDS:
            raise Unavailable(self._open_failed[1], index_down=True)
        try:
            self._retriever = Retriever.from_config(self.config)
        except Exception as exc:
            if not index_down(exc):  # a caller's error, refused data or a bug: not the index being down
                raise
            self._open_failed = (time.monotonic(), self._reason(exc))
            raise Unavailable(self._open_failed[1], index_down=True) from None
        self._open_failed = None
        return self._retriever

    def _drop(self, retriever: Retriever) -> None:
        self._retriever = None
        try:
            retriever.close()
        except Exception as exc:
            if not index_down(exc):
                raise

    def _record(self, query_id: str, caller: str, result: RetrievalResult) -> None:
        if self.feedback is None:
            return
        try:
            self.feedback.record(query_id, caller, [(h.chunk_id, h.recall_injected) for h in result.hits])
        except sqlite3.Error as exc:  # the answer stands; only its feedback cannot be taken
            log.warning("answer %s not recorded for feedback: %s", query_id, exc)

    @staticmethod
    def _reason(exc: BaseException) -> str:
        text = redact(str(exc)).strip()
        log.warning("index unavailable: %s: %s", type(exc).__name__, text)
        first = text.splitlines()[0] if text else type(exc).__name__
        return f"index unavailable: {first[:300]}"
