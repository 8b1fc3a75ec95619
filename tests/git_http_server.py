"""A real git server on 127.0.0.1 for the tests: git's smart HTTP protocol behind HTTP Basic auth.

Requests are checked against one user name and password (401 with `WWW-Authenticate: Basic` otherwise) and
then handed to `git http-backend` as a CGI, so clone, fetch and ls-remote speak to it exactly as to a real
host. It serves the bare repositories under `root` (`url("repo.git")`). While it answers a request the git
client is still running, so it also looks through the command line of every process (/proc/*/cmdline) for
the strings in `watch` and records what it found in `on_command_lines`.
"""

from __future__ import annotations

import base64
import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

BACKEND = (
    Path(subprocess.run(["git", "--exec-path"], capture_output=True, text=True, check=True).stdout.strip())
    / "git-http-backend"
)


class GitHttpServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, root: Path, username: str, password: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.root = Path(root)
        self.username, self.password = username, password
        self.watch: set[str] = {password}  # strings that must appear on no process's command line
        self.on_command_lines: set[str] = set()
        self.attempts: list[tuple[str, str] | None] = []  # the (user, password) of each request, None without
        self.port = self.server_address[1]
        self._thread = threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True)  # shut down at once

    def url(self, name: str, userinfo: str | None = None) -> str:
        return f"http://{userinfo + '@' if userinfo else ''}127.0.0.1:{self.port}/{name}"

    def __enter__(self) -> GitHttpServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()
        self.server_close()

    def look_at_command_lines(self) -> None:
        for proc in Path("/proc").glob("[0-9]*"):
            try:
                line = (proc / "cmdline").read_bytes()
            except OSError:
                continue  # gone already, or not ours to read
            self.on_command_lines.update(s for s in self.watch if s.encode() in line)


class _Handler(BaseHTTPRequestHandler):
    server: GitHttpServer

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _credentials(self) -> tuple[str, str] | None:
        header = self.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            return None
        user, _, password = base64.b64decode(header[6:]).decode("utf-8", "replace").partition(":")
        return user, password

    def _serve(self) -> None:
        server = self.server
        server.look_at_command_lines()
        given = self._credentials()
        server.attempts.append(given)
        if given != (server.username, server.password):
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="x"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self._relay(*self._run_backend(self._body()))

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()  # the CRLF after the chunk
            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return b"".join(chunks)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _run_backend(self, body: bytes) -> tuple[bytes, bytes]:
        path, _, query = self.path.partition("?")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(self.server.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_CONFIG_SYSTEM": "/dev/null",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": self.server.username,
            "REMOTE_ADDR": self.client_address[0],
            "GATEWAY_INTERFACE": "CGI/1.1",
            "SERVER_PROTOCOL": "HTTP/1.1",
        }
        for header, variable in (("Content-Encoding", "HTTP_CONTENT_ENCODING"), ("Git-Protocol", "GIT_PROTOCOL")):
            if self.headers.get(header):
                env[variable] = self.headers[header]
        done = subprocess.run([str(BACKEND)], input=body, capture_output=True, env=env, timeout=60, check=False)
        out = done.stdout
        ends = [(out.find(sep), sep) for sep in (b"\r\n\r\n", b"\n\n") if sep in out]
        if not ends:
            return b"Status: 500 Internal Server Error", done.stderr
        at, sep = min(ends)
        return out[:at], out[at + len(sep) :]  # the CGI headers, then the body

    def _relay(self, head: bytes, payload: bytes) -> None:
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
