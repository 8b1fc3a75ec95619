"""A real HTTP server on 127.0.0.1 that answers like PagerDuty's REST API v2, for the tests.

It serves /incidents (offset/limit/more, since/until on created_at, statuses[]), /incidents/{id},
/incidents/{id}/{log_entries,notes,alerts} and /log_entries?since=; checks the token header; and can be
told to fail a path a number of times first (`faults[path] = [429, 500, ...]`, "truncate", "drip": the
headers, then the body a byte every 50 ms, "drip-headers": the status line and headers themselves a byte every
50 ms, about a minute of them, or "hold": no answer until the test sets `release`, then the usual one), or to say
`more` for ever (`endless`).
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

TOKEN = "pd-test-token-7f3a9"


class FakePagerDuty:
    def __init__(self, incidents: list[dict], parts: dict[str, dict[str, list]], token: str = TOKEN) -> None:
        self.token = token  # the one API token it accepts
        self.incidents = incidents
        self.parts = parts  # incident id -> {"log_entries": [...], "notes": [...], "alerts": [...]}
        self.faults: dict[str, list] = defaultdict(list)
        self.requests: list[tuple[str, dict]] = []
        self.endless = False  # every page says there is more
        self.release = threading.Event()  # ends a "hold"
        self.abandoned = 0  # answers a client hung up on before their headers were all sent ("drip-headers")
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                owner._handle(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)  # shut down at once

    def __enter__(self) -> FakePagerDuty:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]

    def _send(self, handler, status: int, body, headers: dict | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(data)

    def _handle(self, handler) -> None:
        url = urlparse(handler.path)
        query = parse_qs(url.query)
        self.requests.append((url.path, query))
        if handler.headers.get("Authorization") != f"Token token={self.token}":
            return self._send(handler, 401, {"error": {"message": "Unauthorized", "code": 2006}})
        if self.faults[url.path] and self.faults[url.path][0] == "hold":
            self.faults[url.path].pop(0)
            self.release.wait(300)  # a hang guard: the test releases it
        if self.faults[url.path]:
            fault = self.faults[url.path].pop(0)
            if fault == "truncate":
                return self._send(handler, 200, b'{"incidents": [{"id": "P')
            if fault == "drip":
                return self._drip(handler, json.dumps({"incidents": self.incidents}).encode())
            if fault == "drip-headers":
                return self._drip_headers(handler, json.dumps({"incidents": self.incidents}).encode())
            return self._send(
                handler, fault, {"error": {"message": "fault"}}, {"Retry-After": "0.05"} if fault == 429 else None
            )
        parts = url.path.strip("/").split("/")
        limit, offset = int(query.get("limit", ["25"])[0]), int(query.get("offset", ["0"])[0])
        if parts == ["incidents"]:
            items = self.incidents
            if "since" in query:
                items = [i for i in items if i["created_at"] >= query["since"][0]]
            if "until" in query:
                items = [i for i in items if i["created_at"] < query["until"][0]]
            if "statuses[]" in query:
                items = [i for i in items if i["status"] in query["statuses[]"]]
            return self._page(handler, "incidents", items, limit, offset)
        if parts == ["log_entries"]:
            since = query.get("since", [""])[0]
            items = [e for p in self.parts.values() for e in p.get("log_entries", []) if e["created_at"] >= since[:19]]
            return self._page(handler, "log_entries", items, limit, offset)
        if len(parts) == 2 and parts[0] == "incidents":
            found = [i for i in self.incidents if i["id"] == parts[1]]
            return (
                self._send(handler, 200, {"incident": found[0]}) if found else self._send(handler, 404, {"error": {}})
            )
        if len(parts) == 3 and parts[0] == "incidents" and parts[2] in ("log_entries", "notes", "alerts"):
            if parts[1] not in self.parts:
                return self._send(handler, 404, {"error": {"message": "Not Found"}})
            items = self.parts[parts[1]].get(parts[2], [])
            if parts[2] == "notes":
                return self._send(handler, 200, {"notes": items})  # the notes endpoint is not paginated
            return self._page(handler, parts[2], items, limit, offset)
        return self._send(handler, 404, {"error": {"message": "Not Found"}})

    def _page(self, handler, key: str, items: list, limit: int, offset: int) -> None:
        page = items[:limit] if self.endless else items[offset : offset + limit]
        more = self.endless or offset + limit < len(items)
        self._send(handler, 200, {key: page, "limit": limit, "offset": offset, "more": more})

    def _drip(self, handler, data: bytes) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        try:
            for i in range(len(data)):
                handler.wfile.write(data[i : i + 1])
                handler.wfile.flush()
                time.sleep(0.05)
        except OSError:  # the client gave up
            pass

    def _drip_headers(self, handler, data: bytes) -> None:
        """A server that answers each read at once, a byte at a time: no single read ever waits long."""
        head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        head += "".join(f"X-Padding-{n}: {'x' * 12}\r\n" for n in range(40))
        head += f"Content-Length: {len(data)}\r\n\r\n"
        try:
            for byte in head.encode():
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
                time.sleep(0.05)
            handler.wfile.write(data)
        except OSError:  # the client gave up
            self.abandoned += 1
        handler.close_connection = True
