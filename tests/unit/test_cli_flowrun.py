"""The terminal shows Cairn's lines only while a flow runs (cli/flowrun.py): other stream handlers (Prefect's
console handler, on the root logger and its own) pass nothing unless --verbose; Cairn's own handler and handlers
that do not write to a stream (Prefect's API shipping) are left alone."""

from __future__ import annotations

import logging
import sys

import pytest

from cairn.cli.app import set_log_level
from cairn.cli.flowrun import quiet_prefect


@pytest.fixture
def prefect_like(capfd):
    """A logger with a console handler on the process's stderr and a handler that is not a stream, as Prefect sets
    up (capfd reads what reaches file descriptor 2)."""
    shipped: list[logging.LogRecord] = []
    logger = logging.getLogger("prefect.flow_runs.test-quiet")
    console = logging.StreamHandler(sys.__stderr__)
    api = logging.Handler()
    api.emit = shipped.append  # type: ignore[method-assign]
    logger.addHandler(console)
    logger.addHandler(api)
    logger.propagate = False  # these two handlers are the whole picture (not what other tests left on the root)
    cairn_level = logging.getLogger("cairn").level
    yield logger, capfd, shipped
    logger.removeHandler(console)
    logger.removeHandler(api)
    logging.getLogger("cairn").setLevel(cairn_level)


def test_prefects_lines_stay_off_the_terminal_but_keep_reaching_prefect(prefect_like):
    logger, capfd, shipped = prefect_like
    set_log_level(logging.WARNING)  # no --verbose
    quiet_prefect()
    logger.warning("10 input(s) failed; see the run report")
    assert capfd.readouterr().err == "" and len(shipped) == 1


def test_verbose_shows_prefects_lines_and_their_tracebacks(prefect_like):
    logger, capfd, _ = prefect_like
    quiet_prefect()
    set_log_level(logging.INFO)  # --verbose
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logger.exception("Task run failed")
    err = capfd.readouterr().err
    assert "Task run failed" in err and "Traceback" in err


def test_a_handler_writing_elsewhere_keeps_everything(prefect_like, caplog):
    logger, _, _ = prefect_like
    set_log_level(logging.WARNING)
    quiet_prefect()  # pytest's capture handler writes to memory, as a file handler writes to its file
    logger.warning("kept")
    assert "kept" in caplog.text


@pytest.mark.parametrize(
    ("runner", "api", "inline"),
    [
        ({}, False, True),  # from a shell with no Prefect API: this process, no Prefect
        ({"local_prefect_server": True}, False, False),  # asked for: a flow run on the local server
        ({"kind": "dask"}, False, False),  # Dask's model work is Prefect tasks: a flow run
        ({}, True, False),  # a configured API: every run is a flow run there
    ],
)
def test_a_run_is_inline_only_with_no_prefect_api_the_thread_runner_and_no_local_server(
    monkeypatch, runner, api, inline
):
    """Whether an API is configured is flows/prefect_api.py's answer (tests/integration/test_prefect_settings.py, in
    fresh processes: this one may hold another test's Prefect settings)."""
    from cairn.cli.flowrun import runs_inline
    from cairn.flows import prefect_api
    from cairn.schemas.config import parse_config

    monkeypatch.setattr(prefect_api, "prefect_api_configured", lambda: api)
    assert runs_inline(parse_config({"runner": runner})) is inline
