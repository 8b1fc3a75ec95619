"""A real TCP server on 127.0.0.1 that takes every connection and never answers (`drip=False`), or answers a byte at a
time for ever (`drip=True`: an HTTP status line, then header lines a byte every 50 ms), for the tests of what a
source does when the other end stalls. It counts the connections it took and those the client hung up on."""

from __future__ import annotations

import itertools
import socket
import threading
import time


class StallingServer:
    def __init__(self, drip: bool = False) -> None:
        self.drip = drip
        self.accepted = 0  # connections taken
        self.hung_up = 0  # connections the client closed (seen by a read or a write that failed or found EOF)
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self) -> StallingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._sock.close()

    def wait_for_hang_ups(self, count: int, guard_seconds: float = 30) -> int:
        """How many connections the client closed, once `count` have been (or the hang guard passed)."""
        deadline = time.monotonic() + guard_seconds
        while self.hung_up < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.hung_up

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._sock.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._hold, args=(connection,), daemon=True).start()

    def _hold(self, connection: socket.socket) -> None:
        """Keep the connection until the client closes it: read (and drop) what it sends, answer nothing or a byte
        at a time."""
        connection.settimeout(0.05)
        head = itertools.chain(b"HTTP/1.1 200 OK\r\n", itertools.cycle(b"X-Padding: x\r\n"))
        with connection:
            while not self._stop.is_set():
                try:
                    if not connection.recv(65536):
                        break  # the client closed its end
                except TimeoutError:
                    pass
                except OSError:
                    break
                if self.drip:
                    try:
                        connection.send(bytes([next(head)]))
                    except OSError:
                        break
            else:
                return
            self.hung_up += 1
