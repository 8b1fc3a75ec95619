"""Keys revoked without a restart: each worker re-reads the principals (`[[serve.principals]]`, with their rates)
from its configuration file on SIGHUP and whenever the file changes, checked every CHECK_SECONDS.

A file that no longer loads (a typo, a half-written copy) changes nothing: the last good principals stay, the log
says why at ERROR, and `cairn_config_reload_ok` is 0 (`cairn_config_reloads_total{outcome="failed"}` counts it)
until a good file loads. Only the principals are taken from the new file: every other setting (the index, the
limits, the port) is read at start.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path

from cairn.errors import ConfigError
from cairn.schemas.config import load_config
from cairn.serve.auth import Keyring
from cairn.serve.metrics import ServiceMetrics

log = logging.getLogger("cairn.serve")
CHECK_SECONDS = 5.0  # how often the file is looked at (a stat); a removed key answers 401 within this, plus a load


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """What says the file changed: its inode, size and modification time (None when it is not there)."""
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_ino, found.st_size, found.st_mtime_ns


class PrincipalsReloader:
    """Re-reads the principals of `path` into `keyring` when asked (SIGHUP) or when the file changed."""

    def __init__(self, path: Path, keyring: Keyring, metrics: ServiceMetrics) -> None:
        self.path, self.keyring, self.metrics = path, keyring, metrics
        self._seen = _stamp(path)
        metrics.config_reload_ok.set(1)  # at start: the file loaded (not counted as a reload)

    def check(self) -> None:
        """Reload when the file changed since it was last looked at."""
        stamp = _stamp(self.path)
        if stamp != self._seen:
            self._seen = stamp
            self.reload("the file changed")

    def reload(self, why: str) -> bool:
        """Take the principals of the file as it is now; keep the current ones when it does not load."""
        try:
            serve = load_config(self.path).serve
        except (ConfigError, OSError) as exc:
            self.metrics.reloaded(False)
            reason = " ".join(str(exc).split())[:500]
            log.error("principals not re-read (%s): %s; the last good ones stay in force", why, reason)
            return False
        self.keyring.replace(serve)
        self.metrics.reloaded(True)
        log.warning(
            "principals re-read from %s (%s): %d keys", self.path, why, len(self.keyring)
        )  # who may call changed
        return True

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """While the app serves: the file checked every CHECK_SECONDS, and SIGHUP answered (where signals are)."""
        loop = asyncio.get_running_loop()
        hup = getattr(signal, "SIGHUP", None)

        def on_hup() -> None:
            loop.create_task(asyncio.to_thread(self.reload, "SIGHUP"))

        if hup is not None:
            with suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread (tests' servers)
                loop.add_signal_handler(hup, on_hup)

        async def watch() -> None:
            while True:
                await asyncio.sleep(CHECK_SECONDS)
                await asyncio.to_thread(self.check)

        task = loop.create_task(watch())
        try:
            yield
        finally:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
            if hup is not None:
                with suppress(NotImplementedError, RuntimeError, ValueError):
                    loop.remove_signal_handler(hup)


def ignore_hup_until_ready() -> None:
    """A worker process ignores SIGHUP until its app installs the reload: one sent while it starts must not end
    it (SIGHUP's default action)."""
    if hasattr(signal, "SIGHUP") and os.name == "posix":
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
