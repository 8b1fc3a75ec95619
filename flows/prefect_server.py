"""The Prefect API a `cairn` command's flow run reports to when none is configured and `[runner]
local_prefect_server` is on (or the runner is Dask's): one local server per Prefect home, shared by this user's
Cairn processes and kept warm between runs. Otherwise, with no API, the command runs without Prefect
(cli/flowrun.py, flows/run.py InlineHost).

Prefect runs a flow only against an API. With no PREFECT_API_URL, Prefect starts a temporary server inside each
run and stops it when the process ends: the run's process imports Prefect's server package (about 3 s here) and
then waits for the server to answer (about 6 s more), so every run with work paid some 9 s before its first step,
however small its change (issue #35). Instead, asked to, the CLI starts the same server (uvicorn with Prefect's own app,
as its temporary server is run: no UI, the ephemeral services, the database under the Prefect home) as a shared
server of cairn/daemon.py: `python -m cairn.flows.prefect_server HOME`, on 127.0.0.1 at a port the system
picks, its files beside `HOME/cairn-prefect` (`.server`: pid and API URL). A run leases it for its length;
it stops `[runner] prefect_idle_seconds` after the last run let go, so runs closer together than that find it
warm. The CLI starts it in the background as soon as it knows a flow will run, beside the rest of its set-up.

Runs are recorded exactly as before (same database, `prefect server start` shows them). With PREFECT_API_URL
set (a standing server, a deployment's worker), none of this happens. A flow called from plain Python without
an API still gets Prefect's temporary server: only the CLI manages this one.
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cairn import daemon
from cairn.flows.prefect_api import prefect_api_configured, prefect_home, reporting_to_local

log = logging.getLogger(__name__)
SERVER_SETTINGS = {  # what Prefect's temporary server runs with (prefect.server.api.server.SubprocessASGIServer)
    "PREFECT_UI_ENABLED": "0",
    "PREFECT__SERVER_EPHEMERAL": "1",
    "PREFECT__SERVER_FINAL": "1",
}


def base(home: Path) -> Path:
    return home / "cairn-prefect"


def connect(home: Path, idle_seconds: float) -> str:
    """The API URL of the local server of `home`, started if none runs. The calling process holds a lease on it
    until `release(home)` (once per `connect`) or its exit."""
    named = base(home)
    command = [sys.executable, "-m", __name__, str(home), "--idle-seconds", str(idle_seconds)]
    why = f"the local Prefect server exited before serving (its log: {daemon.beside(named, '.server.log')})"
    return str(daemon.connect(named, daemon.Server("the local Prefect server", command, _answers, lambda: why))["url"])


def _answers(record: dict[str, Any]) -> bool:
    """Whether something listens where the record says (a stale record whose pid was reused does not)."""
    try:
        port = int(str(record["url"]).rsplit(":", 1)[1].split("/", 1)[0])
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except (OSError, ValueError, KeyError, IndexError):
        return False


def release(home: Path) -> None:
    daemon.release(base(home))


def stop(home: Path, wait_seconds: float = 30.0) -> bool:
    """Stop the local server of `home` now; whether one was running."""
    return daemon.stop(base(home), wait_seconds) is not None


class LocalApi:
    """A CLI flow run's Prefect API when none is configured: the local server, found or started in the background
    from `begin()` on (the command goes on with its imports and set-up meanwhile), leased until the run ends."""

    def __init__(self, idle_seconds: float) -> None:
        self.home = prefect_home()
        self._url: Future[str] = Future()
        # a daemon thread: a command that stops early (an error, Ctrl-C) does not wait for the server's start
        threading.Thread(target=self._connect, args=(idle_seconds,), name="cairn-prefect-server", daemon=True).start()

    def _connect(self, idle_seconds: float) -> None:
        try:
            self._url.set_result(connect(self.home, idle_seconds))
        except BaseException as exc:  # noqa: BLE001 - handed to the run, which raises it
            self._url.set_exception(exc)

    @classmethod
    def begin(cls, idle_seconds: float) -> LocalApi | None:
        """None when a Prefect API is configured, in the environment or in Prefect's own settings (a profile, a
        .env file: Prefect is imported to ask, as the run is about to import it anyway); the run reports there."""
        import prefect.settings  # noqa: F401 - prefect_api_configured asks Prefect's settings once it is imported

        return None if prefect_api_configured() else cls(idle_seconds)

    @contextmanager
    def settings(self) -> Iterator[str]:
        """Prefect's settings pointed at the local server for the block (its URL), then the lease let go. Without
        flow-run heartbeats: they serve only automations that mark silent runs crashed, which this server has none
        of, and each run waited up to a second at its end for the heartbeat thread to stop."""
        from prefect.settings import PREFECT_API_URL, PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

        url = self._url.result()
        try:
            with (
                temporary_settings({PREFECT_API_URL: url, PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}),
                reporting_to_local(url),
            ):
                yield url
        finally:
            release(self.home)


@contextmanager
def flow_api(api: LocalApi | None) -> Iterator[None]:
    """The block runs with `api`'s settings, or as configured when it is None."""
    if api is None:
        yield
        return
    with api.settings():
        yield


# ---- the server process -------------------------------------------------------------------------------------


def serve(home: Path, idle_seconds: float) -> int:
    os.environ.update(SERVER_SETTINGS, PREFECT_HOME=str(home))  # before Prefect reads its settings
    import uvicorn
    from prefect.server.api.server import create_app

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    class Server(uvicorn.Server):
        """uvicorn's server, which SIGTERM and SIGINT stop cleanly without raising the signal again once it has
        shut down (uvicorn does, to end the process as the signal would: here the record is removed first)."""

        def handle_exit(self, sig: int, frame: Any) -> None:
            self.should_exit = True

    app = create_app(ephemeral=True, final=True)
    server = Server(uvicorn.Config(app, log_level="error", lifespan="on", timeout_graceful_shutdown=10))
    stopping, held = threading.Event(), []

    def watch() -> None:
        while not server.started:  # migrations and services first: the record means "answers now"
            if server.should_exit or stopping.wait(0.05):
                return
        named = base(home)
        daemon.publish(named, {"url": f"http://127.0.0.1:{port}/api"})
        log.info("serving the Prefect API of %s on port %d", home, port)
        serving = lambda: not server.should_exit and home.exists()  # noqa: E731 - stopped, or its home removed
        held.append(daemon.wait_idle(named, idle_seconds, stopping, valid=serving))
        daemon.unpublish(named)
        server.should_exit = True

    watcher = threading.Thread(target=watch, name="idle-watch", daemon=True)
    watcher.start()
    server.run(sockets=[listener])
    stopping.set()
    daemon.unpublish(base(home))
    log.info("stopped serving the Prefect API of %s", home)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve a local Prefect API to the Cairn processes of this user.")
    parser.add_argument("home", type=Path)
    parser.add_argument("--idle-seconds", type=float, default=900.0)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(process)d %(levelname)s %(message)s")
    log.setLevel(logging.INFO)  # its own start and stop; the server's services only when they warn
    return serve(args.home.resolve(), args.idle_seconds)


if __name__ == "__main__":
    raise SystemExit(main())
