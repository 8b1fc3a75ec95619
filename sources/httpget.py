"""An HTTP request with one deadline for all of it: connecting, the status line and headers, and the body.

urllib's `timeout` bounds each socket operation, not a request: a server that answers every read at once with a
single byte (its headers or its body) holds a client for as long as it likes. Here each read of the response waits
at most what is left of the request's time, and none starts past it (TimeoutError, which callers retry like any
network error). Connecting is given what is left too. urllib's behaviour is otherwise kept whole: its redirects
(an `add_unredirected_header` stays on the first host), proxies, HTTPError for a 4xx or 5xx.
"""

from __future__ import annotations

import http.client
import io
import socket
import time
import urllib.request
from typing import Any

CHUNK = 1 << 16  # bytes asked of a response at a time when its size is capped


class TooLarge(Exception):
    """A response body over the size a caller allowed (`limit` bytes): refused as it was read."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the response is over {limit:,} bytes")
        self.limit = limit


class Deadline:
    """When a request must be over, and what is left of it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def left(self) -> float:
        """Seconds left; TimeoutError once none are."""
        left = self.at - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"the response took longer than {self.seconds:g} s")
        return left


class _BoundedReads(io.RawIOBase):
    """A socket's reads (its own SocketIO, which keeps the socket open while the response is read, as http.client
    expects), each given what is left of the deadline."""

    def __init__(self, sock: socket.socket, deadline: Deadline) -> None:
        self._sock = sock
        self._raw = sock.makefile("rb", buffering=0)
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        self._sock.settimeout(self._deadline.left())
        try:
            return self._raw.readinto(buffer) or 0  # None only for a non-blocking socket, which this is not
        except TimeoutError:
            self._deadline.left()  # past the deadline: say so
            raise

    def close(self) -> None:
        self._raw.close()
        super().close()


class _Response(http.client.HTTPResponse):
    def __init__(self, sock: socket.socket, *args: Any, deadline: Deadline, **kwargs: Any) -> None:
        super().__init__(sock, *args, **kwargs)
        unbounded, self.fp = self.fp, io.BufferedReader(_BoundedReads(sock, deadline))  # status line, headers, body
        unbounded.close()


def _bounded(base: type[http.client.HTTPConnection], deadline: Deadline) -> Any:
    """A factory of `base` connections whose connect and reads keep to `deadline` (urllib's do_open calls it)."""

    def connection(host: str, timeout: float | None = None, **kwargs: Any) -> http.client.HTTPConnection:
        made = base(host, timeout=min(timeout or deadline.seconds, deadline.left()), **kwargs)
        made.response_class = lambda sock, *a, **k: _Response(sock, *a, deadline=deadline, **k)  # type: ignore[assignment]
        return made

    return connection


class _HttpHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_bounded(http.client.HTTPConnection, self.deadline), req)


class _HttpsHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(
            _bounded(http.client.HTTPSConnection, self.deadline),
            req,
            context=self._context,  # type: ignore[attr-defined]
        )


def get(request: urllib.request.Request, timeout: float, max_bytes: int | None = None) -> bytes:
    """The body of `request`, the whole exchange within `timeout` seconds (TimeoutError past it; urllib's errors
    otherwise: HTTPError for a status of 400 or more, URLError for a network failure), and no longer than
    `max_bytes` (TooLarge, once one byte more has arrived: never held whole)."""
    deadline = Deadline(timeout)
    opener = urllib.request.build_opener(_HttpHandler(deadline), _HttpsHandler(deadline))
    with opener.open(request, timeout=timeout) as response:
        if max_bytes is None:
            return response.read()
        chunks, size = [], 0
        while chunk := response.read(min(CHUNK, max_bytes + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                raise TooLarge(max_bytes)
    return b"".join(chunks)
