"""Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe: JSON messages ended by
a NUL byte, commands on the browser's fd 3, answers and events on its fd 4): no driver, no websocket library.

`Browser.load(url)` opens a page in a viewport of a given size, waits for its load event, and returns what it
did: every request the page asked for (the DevTools Network domain sees each before any connection is tried),
and what a test may ask of it (`evaluate`, `screenshot`). Nothing leaves the machine: every host name resolves
to nothing and every proxied request goes to a closed local port.

Debian's package (`apt-get install -y chromium`) is what .ci/run installs; `chromium_or_skip` skips a test where
it is absent, except in CI (CI=true), where that is a failure.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

import pytest

FLAGS = [
    "--headless",
    "--no-sandbox",  # as root
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--host-resolver-rules=MAP * ~NOTFOUND",  # no name resolves: nothing the page asks for can be fetched
    "--proxy-server=http://127.0.0.1:9",  # and what goes through a proxy meets a closed port
    "--remote-debugging-pipe",
]


def chromium_or_skip() -> str:
    """The Chromium executable; without one, a skip that says how to get it, or a failure in CI."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    reason = "headless Chromium is not installed: apt-get install -y chromium (.ci/run installs it)"
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must run this test")
    pytest.skip(reason)


@dataclass
class Page:
    browser: Browser
    session: str
    requests: list[str] = field(default_factory=list)  # every URL the page asked for, in order

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (returned by value: JSON-able results only)."""
        answer = self.browser.call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=self.session
        )
        if "exceptionDetails" in answer:
            raise AssertionError(f"{expression}: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def screenshot(self) -> bytes:
        """A PNG of the viewport."""
        answer = self.browser.call("Page.captureScreenshot", {"format": "png"}, session=self.session)
        return base64.b64decode(answer["data"])


class Browser:
    """One headless Chromium for a test; a context manager (it is stopped and its profile removed on exit)."""

    def __init__(self, executable: str, timeout: float = 60.0) -> None:
        self.profile = tempfile.mkdtemp(prefix="cairn-chromium-")
        self.timeout = timeout
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        command = [executable, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"]
        # the browser reads fd 3 and writes fd 4: bash (dash takes single-digit descriptors only) places the pipes
        # there, then becomes Chromium
        self.process = subprocess.Popen(
            ["bash", "-c", f'exec "$@" 3<&{to_browser_r} 4>&{from_browser_w}', "chromium", *command],
            pass_fds=(to_browser_r, from_browser_w),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict] = []

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.call("Browser.close", {})
        except Exception:  # noqa: BLE001 - already gone: stopped below either way
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self.to_browser, self.from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_browser], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self.from_browser, 1 << 16)
            if not chunk:
                raise ConnectionError(f"Chromium closed its pipe (exit code {self.process.poll()})")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, params: dict, session: str | None = None) -> dict:
        """Send a command and wait for its answer; the events that arrive meanwhile are kept in `events`."""
        self.next_id += 1
        message = {
            "id": self.next_id,
            "method": method,
            "params": params,
            **({"sessionId": session} if session else {}),
        }
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            answer = self._read(deadline)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def wait_for(self, method: str, session: str) -> dict:
        """The first event `method` of the page's session (already arrived, or the next to arrive)."""
        deadline = time.monotonic() + self.timeout
        seen = 0
        while True:
            for event in self.events[seen:]:
                if event.get("method") == method and event.get("sessionId") == session:
                    return event
            seen = len(self.events)
            self.events.append(self._read(deadline))

    def _drain(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        try:
            while True:
                self.events.append(self._read(deadline))
        except TimeoutError:
            return

    def load(self, url: str, width: int, height: int) -> Page:
        """Open `url` in a new page with a `width` x `height` viewport and wait for its load event."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for method in ("Page.enable", "Network.enable"):
            self.call(method, {}, session=session)
        metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
        self.call("Emulation.setDeviceMetricsOverride", metrics, session=session)
        self.events.clear()
        self.call("Page.navigate", {"url": url}, session=session)
        self.wait_for("Page.loadEventFired", session)
        self._drain(0.5)  # what the page asks for just after its load event (a late image, a font)
        page = Page(self, session)
        page.requests = [
            e["params"]["request"]["url"]
            for e in self.events
            if e.get("method") == "Network.requestWillBeSent" and e.get("sessionId") == session
        ]
        return page
