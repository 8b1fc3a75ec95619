"""A tiny HTTP proxy on 127.0.0.1 that puts a faulty network in front of a real server: in front of an S3
endpoint (the moto server) it answers 503 SlowDown to the first attempts of each request, then forwards it
(botocore's retries, seen from the wire); with `failures=0` and a `delay_seconds` it is a slow link in front of
any HTTP server (a loaded Prefect server).

Each distinct request (method, path and query) is failed `failures` times (None: always); every request
is recorded with the attempt number botocore puts in its `amz-sdk-request` header and the status answered.
"""

from __future__ import annotations

import http.client
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

SLOW_DOWN = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message><RequestId>proxy</RequestId></Error>"
)
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "upgrade"}


class FaultyProxy:
    def __init__(self, upstream: str, failures: int | None = 2, delay_seconds: float = 0.0) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname, parts.port)
        self.failures = failures
        self.delay_seconds = delay_seconds
        self.requests: list[dict] = []  # {"method", "path", "attempt", "max", "status"}
        self._seen: Counter = Counter()
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _any(self):
                owner._handle(self)

            do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = do_DELETE = _any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)  # shut down at once

    def __enter__(self) -> FaultyProxy:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        sdk = dict(
            item.strip().split("=", 1)
            for item in (handler.headers.get("amz-sdk-request") or "").split(";")
            if "=" in item
        )
        key = (handler.command, handler.path)
        with self._lock:
            self._seen[key] += 1
            fail = self.failures is None or self._seen[key] <= self.failures
        record = {
            "method": handler.command,
            "path": handler.path,
            "attempt": int(sdk.get("attempt", 0)),
            "max": int(sdk.get("max", 0)),
        }
        if fail:
            record["status"] = 503
            self._record(record)
            handler.send_response(503)
            handler.send_header("Content-Type", "application/xml")
            handler.send_header("Content-Length", str(len(SLOW_DOWN)))
            handler.end_headers()
            if handler.command != "HEAD":
                handler.wfile.write(SLOW_DOWN)
            return
        time.sleep(self.delay_seconds)
        connection = http.client.HTTPConnection(*self.upstream, timeout=30)
        try:
            headers = {k: v for k, v in handler.headers.items() if k.lower() not in _HOP_BY_HOP}
            connection.request(handler.command, handler.path, body=body or None, headers=headers)
            response = connection.getresponse()
            data = response.read()
            record["status"] = response.status
            self._record(record)
            handler.send_response(response.status)
            head = handler.command == "HEAD"  # its Content-Length is the object's, with no body
            for name, value in response.getheaders():
                if name.lower() not in _HOP_BY_HOP and (head or name.lower() != "content-length"):
                    handler.send_header(name, value)
            if not head:
                handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            if handler.command != "HEAD":
                handler.wfile.write(data)
        finally:
            connection.close()

    def _record(self, record: dict) -> None:
        with self._lock:
            self.requests.append(record)
