"""The Prefect settings Cairn sets before Prefect is first imported (flows/__init__.py): Prefect reads them, and
a value the environment gives wins."""

import os
import subprocess
import sys

READ = (
    "import cairn.flows; from prefect.settings import PREFECT_API_REQUEST_TIMEOUT as t, "
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS as s; print(t.value(), s.value())"
)


def prefect_reads(home, **env: str) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    clean["PREFECT_HOME"] = str(home)  # no profile of this machine's user either
    done = subprocess.run(
        [sys.executable, "-c", READ], env={**clean, **env}, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_api_calls_and_the_temporary_server_get_ten_minutes_unless_the_environment_says_otherwise(tmp_path):
    assert prefect_reads(tmp_path) == ["600.0", "600"]
    assert prefect_reads(tmp_path, PREFECT_API_REQUEST_TIMEOUT="45") == ["45.0", "600"]
