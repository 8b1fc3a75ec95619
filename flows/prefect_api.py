"""Whether flow runs go to a Prefect server: the one answer the CLI (a Prefect flow run or a run in its own process,
cli/flowrun.py), the no-op check (flows/noop.py) and the writer slot (flows/concurrency.py) all read."""

from __future__ import annotations

import os
import sys
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_LOCAL: set[str] = set()  # API URLs of the local Prefect server this process's runs report to now
# files in the working directory that Prefect reads its settings from, besides the environment and its profiles
_WORKING_DIRECTORY_SETTINGS = (".env", "prefect.toml")


def prefect_api_configured() -> bool:
    """Whether a Prefect server is configured (PREFECT_API_URL in the environment or in Prefect's settings), else a
    flow run reports to a server of its own: Prefect's temporary one, or the CLI's local one
    (flows/prefect_server.py), which is not a configured server either (it coordinates no other machine, and frees
    no concurrency slot a killed run held).

    Importing Prefect just to ask costs about a second, more than the whole no-op check that asks before a run. So
    before Prefect is imported the environment and the active profile of Prefect's profiles file answer, as Prefect
    reads them; only settings files in the working directory (.env, prefect.toml, pyproject.toml's [tool.prefect])
    make it ask Prefect itself. Once Prefect is imported, its settings answer (a temporary setting too)."""
    if os.environ.get("PREFECT_API_URL"):
        return True
    if "prefect" not in sys.modules:
        answer = _from_profile()
        if answer is not None:
            return answer
    from prefect.settings import PREFECT_API_URL

    configured = PREFECT_API_URL.value()
    return bool(configured) and configured not in _LOCAL


def _from_profile() -> bool | None:
    """PREFECT_API_URL in the active profile, read as Prefect reads it; None when only Prefect can tell."""
    cwd = Path.cwd()
    if any((cwd / name).exists() for name in _WORKING_DIRECTORY_SETTINGS) or _tool_prefect(cwd / "pyproject.toml"):
        return None
    path = Path(os.environ.get("PREFECT_PROFILES_PATH") or prefect_home() / "profiles.toml").expanduser()
    try:
        profiles = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False  # Prefect's own default profiles name no server
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    active = os.environ.get("PREFECT_PROFILE") or profiles.get("active") or "ephemeral"
    profile = (profiles.get("profiles") or {}).get(active)
    return bool(isinstance(profile, dict) and profile.get("PREFECT_API_URL"))


def prefect_home() -> Path:
    """The Prefect home, as Prefect reads it without a profile: PREFECT_HOME, else ~/.prefect."""
    return Path(os.environ.get("PREFECT_HOME") or Path.home() / ".prefect").expanduser().resolve()


def _tool_prefect(pyproject: Path) -> bool:
    try:
        return "tool" in (data := tomllib.loads(pyproject.read_text(encoding="utf-8"))) and "prefect" in data["tool"]
    except FileNotFoundError:
        return False
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return True  # Prefect would have to tell


@contextmanager
def reporting_to_local(url: str) -> Iterator[None]:
    """For the block, `url` (the local server, set as PREFECT_API_URL by the caller) counts as no configured API."""
    _LOCAL.add(url)
    try:
        yield
    finally:
        _LOCAL.discard(url)
