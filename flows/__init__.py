"""A run (run.py) and the Prefect flows around it. Prefect runs with no set-up: a local server when asked for (the
CLI's, kept warm between runs: prefect_server.py; else Prefect's temporary one), quiet logs, no analytics; these
defaults are set before Prefect is first imported and yield to the environment."""

if not __name__.startswith("cairn."):  # the folder is mapped into the cairn namespace (pyproject.toml)
    raise ImportError(f"import cairn.{__name__}, not {__name__}: Cairn installs one top-level package")
import os

for _key, _value in {
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "600",  # a hang guard: a slow machine took 4 min
    # Prefect's client gives up on an API call after 60 s: on a loaded machine creating a flow run against the
    # temporary server took longer (httpx.ReadTimeout), and the ingest died before it began. Also a hang guard.
    "PREFECT_API_REQUEST_TIMEOUT": "600",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
    "PREFECT_LOGGING_LEVEL": "WARNING",
    "PREFECT_SERVER_LOGGING_LEVEL": "WARNING",
    "PREFECT_LOGGING_TO_API_ENABLED": "false",
}.items():
    os.environ.setdefault(_key, _value)
