"""sources.pagerduty: external identifiers are checked before they become paths or URLs, and the API token never
follows a redirect to another host."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from cairn.schemas.config import PagerDutySourceConfig
from cairn.sources import DiscoveryFailure
from cairn.sources.pagerduty import PagerDutySource
from cairn.sources.pagerduty.api import PagerDutyApi, RetryPolicy, checked_id


class Recorder:
    """A real HTTP server on 127.0.0.1 that answers every GET with `status` (and `location`) and keeps the
    headers it was sent."""

    def __init__(self, status: int = 200, location: str = "") -> None:
        self.seen: list[dict] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                owner.seen.append({k.lower(): v for k, v in self.headers.items()})
                body = json.dumps({"incidents": [], "more": False}).encode()
                self.send_response(status)
                if location:
                    self.send_header("Location", location)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()  # shut down at once

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_the_token_is_not_sent_on_to_the_host_a_redirect_names():
    elsewhere = Recorder()
    api_host = Recorder(status=302, location=f"{elsewhere.url}/collect")
    try:
        PagerDutyApi(api_host.url, "pd-secret-token", retry=RetryPolicy(attempts=1)).get("/incidents")
        assert api_host.seen and api_host.seen[0]["authorization"] == "Token token=pd-secret-token"
        assert elsewhere.seen, "the redirect was followed"
        assert "authorization" not in elsewhere.seen[0]
        assert "pd-secret-token" not in json.dumps(elsewhere.seen)
    finally:
        api_host.close()
        elsewhere.close()


@pytest.mark.parametrize("bad", ["../../etc", "a/b", "..", "", "x" * 65, "Q1%2F..", "id with space", 7])
def test_ids_that_could_escape_a_folder_or_a_url_are_refused(bad):
    with pytest.raises(ValueError, match="is not a PagerDuty id"):
        checked_id(bad)
    assert checked_id("Q1ABCDEF") == "Q1ABCDEF"


def test_an_export_incident_whose_id_is_a_path_is_a_failure_and_nothing_outside_is_read(tmp_path):
    export = tmp_path / "export"
    export.mkdir()
    secret = tmp_path / "log_entries.json"  # what "../log_entries.json" would reach
    secret.write_text(json.dumps({"log_entries": [{"summary": "outside the export"}]}))
    incident = {
        "id": "..",
        "incident_number": 1,
        "title": "t",
        "status": "resolved",
        "created_at": "2026-01-01T00:00:00Z",
        "service": {"id": "S1", "summary": "svc"},
    }
    (export / "incidents.json").write_text(json.dumps({"incidents": [incident]}))
    source = PagerDutySource(
        PagerDutySourceConfig(name="pd", type="pagerduty", path=str(export), tenant="a", acl=["sre"])
    )
    found = list(source.discover())
    assert len(found) == 1 and isinstance(found[0], DiscoveryFailure)
    assert "is not a PagerDuty id" in found[0].reason
