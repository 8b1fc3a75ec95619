"""The terminal shows Cairn's lines only while a flow runs (cli/flowrun.py): other stream handlers (Prefect's
console handler, on the root logger and its own) pass nothing unless --verbose; Cairn's own handler and handlers
that do not write to a stream (Prefect's API shipping) are left alone."""

from __future__ import annotations

import io
import logging

import pytest

from cairn.cli.app import set_log_level
from cairn.cli.flowrun import quiet_prefect


@pytest.fixture
def prefect_like():
    """A logger with a console handler on a stream and a handler that is not a stream, as Prefect sets up."""
    stream, shipped = io.StringIO(), []
    logger = logging.getLogger("prefect.flow_runs.test-quiet")
    console = logging.StreamHandler(stream)
    api = logging.Handler()
    api.emit = shipped.append  # type: ignore[method-assign]
    logger.addHandler(console)
    logger.addHandler(api)
    cairn_level = logging.getLogger("cairn").level
    yield logger, stream, shipped
    logger.removeHandler(console)
    logger.removeHandler(api)
    logging.getLogger("cairn").setLevel(cairn_level)


def test_prefects_lines_stay_off_the_terminal_but_keep_reaching_prefect(prefect_like):
    logger, stream, shipped = prefect_like
    set_log_level(logging.WARNING)  # no --verbose
    quiet_prefect()
    logger.warning("10 input(s) failed; see the run report")
    assert stream.getvalue() == "" and len(shipped) == 1


def test_verbose_shows_prefects_lines_and_their_tracebacks(prefect_like):
    logger, stream, _ = prefect_like
    quiet_prefect()
    set_log_level(logging.INFO)  # --verbose
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logger.exception("Task run failed")
    assert "Task run failed" in stream.getvalue() and "Traceback" in stream.getvalue()
