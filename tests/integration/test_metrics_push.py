"""A run's figures pushed to a Pushgateway ([metrics] pushgateway_url). No Pushgateway is installable here: the
receiver is an HTTP server on 127.0.0.1 that keeps what the Pushgateway API is sent (method, path, body), and the
body is read back with prometheus_client's own text parser."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from prometheus_client.parser import text_string_to_metric_families

from cairn.flows.metrics_push import push_run_metrics
from cairn.schemas.config import MetricsConfig
from cairn.schemas.run_report import DocumentCounts, RunReport, SourceOutcome
from tests.conftest import free_port, write_config
from tests.integration import corpus


class Receiver:
    def __init__(self) -> None:
        self.pushes: list[tuple[str, str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"])).decode()
                outer.pushes.append((self.command, self.path, body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *_):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def values(self, path_end: str) -> dict[str, float]:
        (body,) = [b for _, p, b in self.pushes if p.endswith(path_end)]
        return {
            (s.name + ("." + s.labels["outcome"] if "outcome" in s.labels else "")): s.value
            for family in text_string_to_metric_families(body)
            for s in family.samples
        }


@pytest.fixture
def receiver():
    running = Receiver()
    yield running
    running.server.shutdown()


REPORT = RunReport(
    run_id="r1",
    per_source={
        "wiki": SourceOutcome("partial", DocumentCounts(seen=5, indexed=3, unchanged=1, failed=1), 12, seconds=2.5),
        "pd": SourceOutcome("failed", DocumentCounts(), seconds=0.1, error="unreachable"),
    },
)


@pytest.mark.core
def test_each_source_is_pushed_as_its_own_group_and_a_failed_source_keeps_its_last_success(receiver):
    pushed = push_run_metrics(MetricsConfig(pushgateway_url=receiver.url, job="nightly"), REPORT)
    assert pushed == 2 and {(m, p) for m, p, _ in receiver.pushes} == {
        ("POST", "/metrics/job/nightly/source/wiki"),
        ("POST", "/metrics/job/nightly/source/pd"),
    }
    wiki, pd = receiver.values("/source/wiki"), receiver.values("/source/pd")
    assert wiki["cairn_ingest_documents.indexed"] == 3 and wiki["cairn_ingest_documents.failed"] == 1
    assert wiki["cairn_ingest_embeddings_computed"] == 12 and wiki["cairn_ingest_seconds"] == 2.5
    assert wiki["cairn_ingest_source_failed"] == 0 and "cairn_ingest_last_success_timestamp_seconds" in wiki
    assert pd["cairn_ingest_source_failed"] == 1 and "cairn_ingest_last_success_timestamp_seconds" not in pd
    assert pd["cairn_ingest_last_run_timestamp_seconds"] == wiki["cairn_ingest_last_run_timestamp_seconds"]


def test_nothing_is_pushed_without_a_url_and_an_unreachable_gateway_is_a_warning(caplog):
    assert push_run_metrics(MetricsConfig(), REPORT) == 0
    gone = f"http://user:s3cret@127.0.0.1:{free_port()}"
    assert push_run_metrics(MetricsConfig(pushgateway_url=gone, timeout_seconds=5), REPORT) == 0
    assert "not pushed" in caplog.text and "s3cret" not in caplog.text


def test_an_ingest_run_pushes_what_it_did(tmp_path, prefect_server, receiver):
    from cairn.flows.ingest import ingest_flow

    corpus.build(tmp_path / "wiki")
    source = {"name": "w", "type": "wiki", "path": str(tmp_path / "wiki" / "acme"), "tenant": "acme", "acl": ["sre"]}
    config = write_config(tmp_path / "c.toml", tmp_path / "index", [{**source, "acl_ceiling": corpus.ACME_GROUPS}])
    with config.open("a") as handle:
        handle.write(f'[metrics]\npushgateway_url = "{receiver.url}"\n')
    report = ingest_flow(config_path=str(config))
    pushed = receiver.values("/metrics/job/cairn_ingest/source/w")
    assert pushed["cairn_ingest_documents.indexed"] == report["documents"]["indexed"] == 3
    assert pushed["cairn_ingest_embeddings_computed"] == report["embeddings_computed"] > 0
    assert pushed["cairn_ingest_seconds"] == report["per_source"]["w"]["seconds"] > 0
