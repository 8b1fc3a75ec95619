"""A Milvus gRPC server on 127.0.0.1 in a process of its own, for the tests of the server path.

It is milvus-lite's own server (`python -m milvus_lite server`): the Milvus gRPC protocol on a TCP port, in a
separate process, reached with `uri = "http://127.0.0.1:PORT"`, so Cairn takes its server branch (no writer
lock file, no per-batch flush, the token sent, one client per process). Its engine is Milvus Lite's, not a
Milvus standalone's: the differences listed in ../shared/STACK.md (BM25 scores, IDF per segment) remain.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import free_port


class MilvusServer:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.uri = f"http://127.0.0.1:{self.port}"
        self.log = data_dir.parent / f"{data_dir.name}.log"
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> MilvusServer:
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "milvus_lite",
                    "server",
                    "--data-dir",
                    str(self.data_dir),
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 600  # a hang guard: a loaded machine starts processes slowly
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"milvus_lite server exited: {self.log.read_text()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return self
            except OSError:
                time.sleep(0.2)
        self.__exit__()
        raise RuntimeError(f"milvus_lite server not listening on {self.uri} after 600 s")

    def __exit__(self, *exc) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
