"""What `GET /metrics` shows (Prometheus text format): how retrieval behaves, from each answer's diagnostics, and
the feedback rates. The names are documented in docs/service.md; a test reads them back from a live service.

One process: the metrics live in this app's own registry. Several workers (`cairn serve --workers N`): the command
sets PROMETHEUS_MULTIPROC_DIR before the workers start, every worker writes its values there, and whichever
worker answers a scrape sums them (prometheus_client's multiprocess mode), so a scrape sees the whole service.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from cairn.query import RetrievalResult
from cairn.query.empty import REASONS
from cairn.serve.errors import Busy, Unavailable
from cairn.serve.feedback import FeedbackStore

SECONDS = (0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0)
FRACTIONS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
COUNTS = (1, 2, 3, 4, 5, 6, 8, 10, 15, 20)
STATUSES = ("ok", "guidance", "no_results", "error")  # of an answered or failed retrieval
# requests refused: before retrieval, or (busy) when the worker could not give them a turn before their deadline
REJECTIONS = ("unauthorized", "rate_limited", "invalid", "too_large", "busy")


class FeedbackRates(Collector):
    """The feedback rates, read from the shared store at scrape time (so every worker shows the same figures)."""

    def __init__(self, store: FeedbackStore) -> None:
        self.store = store

    def collect(self) -> Iterator[GaugeMetricFamily]:
        rates = self.store.rates()
        described = {
            "sparse_recall_hit_rate": "recall-injected sections marked useful / injected sections marked",
            "sparse_recall_false_positive_rate": "recall-injected sections marked not useful / injected marked",
            "useful_rate": "sections marked useful / sections marked (all sections)",
            "marked": "sections marked through /v1/feedback in the window",
            "injected_marked": "recall-injected sections marked through /v1/feedback in the window",
        }
        for name, text in described.items():
            if name in rates:
                yield GaugeMetricFamily(f"cairn_feedback_{name}", text, value=rates[name])


class ServiceMetrics:
    def __init__(self, feedback: FeedbackStore | None) -> None:
        self.registry = CollectorRegistry()
        self.version = 0  # moved by every change this worker makes (the methods below)
        shared = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))
        into = None if shared else self.registry  # multiprocess: values go to files, read back at scrape time
        self.requests = Counter(
            "cairn_retrieve_requests", "retrievals by outcome", ["status"], registry=into
        )  # ok | guidance | no_results | error
        self.rejected = Counter(
            "cairn_rejected_requests", "requests refused before retrieval", ["reason"], registry=into
        )
        self.seconds = Histogram(
            "cairn_retrieve_seconds", "a retrieval's time in the service", ["status"], buckets=SECONDS, registry=into
        )
        self.stage_seconds = Histogram(
            "cairn_retrieve_stage_seconds", "time per pipeline stage", ["stage"], buckets=SECONDS, registry=into
        )
        self.injections = Counter(
            "cairn_sparse_recall_injections", "sections the short-document guarantee injected", registry=into
        )
        self.primary_fraction = Histogram(
            "cairn_primary_doc_fraction",
            "share of the top-k sections before the dominance gate from the document holding most of their score",
            buckets=FRACTIONS,
            registry=into,
        )
        self.dominance = Histogram(
            "cairn_dominance_score",
            "share of the top-k sections' score (before the dominance gate) held by the leading document",
            buckets=FRACTIONS,
            registry=into,
        )
        self.empty = Counter("cairn_empty_results", "answers without sections, by why", ["reason"], registry=into)
        self.documents = Histogram(
            "cairn_documents_per_answer", "distinct documents in an answer", buckets=COUNTS, registry=into
        )
        self.low_relevance = Counter("cairn_low_relevance_hits", "sections served flagged low relevance", registry=into)
        self.rescues = Counter("cairn_keyword_rescues", "answers kept by the exact-term keyword rescue", registry=into)
        self.floor_dropped = Counter("cairn_floor_dropped_candidates", "candidates the floors cut", registry=into)
        self.expanded = Counter("cairn_expanded_sections", "neighbour sections (expansion) in answers", registry=into)
        self.reranked = Counter(
            "cairn_reranked", "answers whose top candidates the reranker reordered (rule 11)", registry=into
        )
        self.second_pass = Counter(  # 0.5's name for the step the rerank replaced: dashboards keep working
            "cairn_second_pass", "deprecated: the same count as cairn_reranked_total", registry=into
        )
        self.cache_hits = Counter("cairn_cache_hits", "answers served from the retriever's cache", registry=into)
        self.feedback = Counter("cairn_feedback", "feedback marks received", ["injected", "useful"], registry=into)
        self.index_up = Gauge(
            "cairn_index_up", "1 when the last index read succeeded", multiprocess_mode="mostrecent", registry=into
        )
        self.config_reloads = Counter(
            "cairn_config_reloads", "principals re-read from the configuration, by outcome", ["outcome"], registry=into
        )  # ok | failed
        self.config_reload_ok = Gauge(
            "cairn_config_reload_ok",
            "0 while the configuration file no longer loads (the last good principals stay in force)",
            multiprocess_mode="livemin",
            registry=into,
        )
        self.in_flight = Gauge(
            "cairn_retrievals_in_flight", "retrievals running or queued", multiprocess_mode="livesum", registry=into
        )
        for status in STATUSES:  # every series present from the first scrape, at zero
            self.requests.labels(status)
        for reason in REJECTIONS:
            self.rejected.labels(reason)
        for reason in REASONS:
            self.empty.labels(reason)
        for outcome in ("ok", "failed"):
            self.config_reloads.labels(outcome)
        if shared:
            MultiProcessCollector(self.registry)
        if feedback is not None:
            self.registry.register(FeedbackRates(feedback))

    # Every change goes through a method below, which moves `version`: a scrape reuses the text of the last one
    # while nothing changed in this worker (serve/service.py, `exposition`), so a storm of scrapes costs little.
    def reject(self, reason: str) -> None:
        """A request refused: `reason` one of REJECTIONS."""
        self.rejected.labels(reason).inc()
        self.version += 1

    def error(self) -> None:
        """A retrieval that ended in a bug (a 500, or the tool's internal error)."""
        self.requests.labels("error").inc()
        self.version += 1

    def marked(self, injected: bool, useful: bool) -> None:
        self.feedback.labels(str(injected).lower(), str(useful).lower()).inc()
        self.version += 1

    def index(self, up: bool) -> None:
        self.index_up.set(int(up))
        self.version += 1

    def reloaded(self, ok: bool) -> None:
        """The principals re-read from the configuration (`ok`), or not (it no longer loads)."""
        self.config_reloads.labels("ok" if ok else "failed").inc()
        self.config_reload_ok.set(int(ok))
        self.version += 1

    def flight(self, delta: int) -> None:
        self.in_flight.inc(delta)
        self.version += 1

    def answered(self, result: RetrievalResult, seconds: float) -> None:
        """Count one answer, from what its diagnostics say the pipeline did."""
        self.version += 1
        trace = result.diagnostics
        self.requests.labels(result.status).inc()
        self.seconds.labels(result.status).observe(seconds)
        if result.empty_reason:
            self.empty.labels(result.empty_reason).inc()
        if trace.get("cache") == "hit":
            self.cache_hits.inc()
            return  # neither the index nor the stages ran for this answer
        self.index_up.set(1)
        for stage, ms in trace.get("timings_ms", {}).items():
            if stage != "total":
                self.stage_seconds.labels(stage).observe(ms / 1000)
        self.injections.inc(trace.get("injections", 0))
        if trace.get("primary_doc_fraction") is not None:
            self.primary_fraction.observe(trace["primary_doc_fraction"] or 0.0)
        if result.hits:
            self.documents.observe(len({h.document_id for h in result.hits}))
        if trace.get("dominance_score") is not None:
            self.dominance.observe(trace["dominance_score"] or 0.0)
        self.low_relevance.inc(sum(h.low_relevance for h in result.hits))
        floors = trace.get("floors")
        if floors:
            self.floor_dropped.inc(floors["dropped"])
            self.rescues.inc(int(floors["rescued"]))
        self.expanded.inc(trace.get("expanded_sections", 0))
        reranked = int(bool(trace.get("rerank_used")))
        self.reranked.inc(reranked)
        self.second_pass.inc(reranked)

    def failed(self, seconds: float, problem: Unavailable) -> None:
        """A question that got a 503: `busy` (no turn before its deadline) is a rejection, anything else an
        error; `index_up` falls to 0 only when the index itself failed."""
        self.version += 1
        if isinstance(problem, Busy):
            self.rejected.labels("busy").inc()
            return
        self.requests.labels("error").inc()
        self.seconds.labels("error").observe(seconds)
        if problem.index_down:
            self.index_up.set(0)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
