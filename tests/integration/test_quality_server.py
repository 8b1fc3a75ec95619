"""quality/server.py: the data-quality checks server, a real process that imports great-expectations once and checks
for every run of this user; its files in a scratch private folder here (the user's own is left alone)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from multiprocessing.connection import Client
from pathlib import Path

import pytest

from cairn import daemon
from cairn.quality import server
from cairn.quality.frames import to_frame
from cairn.quality.report_folder import checked_by, write_report
from cairn.schemas.row_figures import figures
from tests.conftest import REPO, write_config, write_page
from tests.integration.test_quality import collection  # noqa: F401 - the fixture: rows in a real collection

pytestmark = pytest.mark.slow


@pytest.fixture
def private(monkeypatch):
    """A private folder of the tests' own (short: a unix socket's path holds 107 bytes), its servers stopped after."""
    folder = Path(tempfile.mkdtemp(prefix="cq", dir="/tmp"))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.setenv("TMPDIR", str(folder))  # the same for the processes a test starts
    server.base.cache_clear()
    yield folder
    server.stop_all()
    server.base.cache_clear()
    shutil.rmtree(folder, ignore_errors=True)


def served(checks: server.ChecksServer, *args):
    """write_report(*args) with great-expectations run by `checks`'s server."""
    with checked_by(checks.validate):
        return write_report(*args)


def wait_until(condition, seconds: float = 120.0) -> bool:
    deadline = time.monotonic() + seconds  # a hang guard
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_runs_share_one_server_that_checks_as_this_process_would_and_raises_what_it_would(collection, private):  # noqa: F811
    config, _, rows = collection
    parents = [r for r in rows if r.is_parent]
    frame = to_frame(figures(r) for r in [*rows, replace(parents[0], chunk_id="over", token_count=2400)])
    broken = frame.drop(columns=["token_count"])  # a frame without a column the checks read
    first = server.ChecksServer(idle_seconds=60)
    there = served(first, frame, config, 384, "there", "there")
    pid = server.running()
    second = server.ChecksServer(idle_seconds=60)
    with pytest.raises(Exception) as failed_there:
        served(second, broken, config, 384, "broken", "broken")
    assert server.running() == pid and pid is not None and pid != os.getpid()  # the same server answered both
    here = write_report(frame, config, 384, "here", "here")
    with pytest.raises(failed_there.type, match=re.escape(str(failed_there.value))):
        write_report(broken, config, 384, "broken", "broken")
    assert there.rows == here.rows == len(rows) + 1 and not there.success
    assert [r.to_dict() for r in there.results] == [r.to_dict() for r in here.results]
    assert os.path.getsize(os.path.join(there.report_dir, "gx/uncommitted/data_docs/local_site/index.html")) > 0
    first.close()
    second.close()


def test_its_files_are_private_and_a_caller_without_the_key_is_refused(collection, private):  # noqa: F811
    config, _, rows = collection
    checks = server.ChecksServer(idle_seconds=60)
    frame = to_frame(figures(r) for r in rows)
    assert served(checks, frame, config, 384, "first", "first").success
    record = daemon.running(server.base())
    assert record is not None
    assert server.base().parent.stat().st_mode & 0o777 == 0o700
    assert os.stat(record["socket"]).st_mode & 0o777 == 0o600
    with pytest.raises(Exception, match="digest"):  # multiprocessing's AuthenticationError: nothing was read
        Client(record["socket"], family="AF_UNIX", authkey=b"not the key")
    assert served(checks, frame, config, 384, "after", "after").success  # it still answers
    checks.close()


def test_a_server_that_died_leaves_the_check_to_this_process_and_the_next_run_starts_another(
    collection,  # noqa: F811
    private,
    caplog,
):
    config, _, rows = collection
    frame = to_frame(figures(r) for r in rows)
    checks = server.ChecksServer(idle_seconds=60)
    served(checks, frame, config, 384, "first", "first")
    killed = server.running()
    assert killed is not None
    os.kill(killed, signal.SIGKILL)  # as the out-of-memory killer would
    assert wait_until(lambda: not daemon.alive(killed))
    report = served(checks, frame, config, 384, "fallback", "fallback")
    assert report.success and report.rows == len(rows)
    assert "the data-quality checks server is not available" in caplog.text
    checks.close()
    again = server.ChecksServer(idle_seconds=60)
    assert served(again, frame, config, 384, "again", "again").success
    assert server.running() not in (None, killed)
    again.close()


def test_a_server_stops_its_idle_time_after_the_last_run_let_go_and_on_request(collection, private):  # noqa: F811
    config, _, rows = collection
    frame = to_frame(figures(r) for r in rows)
    checks = server.ChecksServer(idle_seconds=0)
    held = server.ChecksServer(idle_seconds=0)
    served(checks, frame, config, 384, "idle", "idle")
    pid = server.running()
    checks.close()
    time.sleep(1.5)  # past its next look at the leases (every 0.5 s): one run still holds it
    assert server.running() == pid
    held.close()
    assert wait_until(lambda: server.running() is None)  # stopped once no run holds it

    standing = server.ChecksServer(idle_seconds=600)
    served(standing, frame, config, 384, "standing", "standing")
    standing.close()
    stopped = subprocess.run(
        [sys.executable, "-m", "cairn.quality.server", "--stop"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TMPDIR": str(private)},
    )
    assert stopped.returncode == 0 and "stopped 1 data-quality checks server(s)" in stopped.stdout, stopped.stderr
    assert server.running() is None


REPORT_WRITER = """
import sys
from cairn.quality.report_folder import checked_by, write_report
from cairn.quality.worker import ServedWriter, report_writer
write = report_writer(idle_seconds=60)
assert isinstance(write, ServedWriter) and "great_expectations" not in sys.modules  # imported by the server
import great_expectations  # imported here now: the checks run here
assert report_writer() is write_report and report_writer(enabled=False) is write_report
print("ok")
"""


def test_a_process_checks_in_the_server_until_great_expectations_is_imported_in_it(private):
    done = subprocess.run([sys.executable, "-c", REPORT_WRITER], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


@pytest.mark.core
def test_an_ingest_from_the_shell_checks_in_the_server_the_next_run_finds_warm(tmp_path, private):
    for n in range(3):
        write_page(tmp_path / "wiki", f"page-{n}.md", f"# Page {n}\n\n" + f"Restart the worker {n} and drain it. " * 40)
    source = {"name": "wiki", "type": "wiki", "path": str(tmp_path / "wiki"), "tenant": "acme", "acl": ["ops"]}
    config = write_config(tmp_path / "c.toml", tmp_path / "index", [source], quality={"on_ingest": True})
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}

    def ingest() -> dict:
        done = subprocess.run(
            [sys.executable, "-m", "cairn.cli", "--config", str(config), "ingest", "--json"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=900,
            env=env,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout)

    first = ingest()
    started = server.running()
    assert first["quality"]["success"] and started is not None  # the run started the server and it checked
    write_page(tmp_path / "wiki", "page-3.md", "# Page 3\n\n" + "Page the on-call engineer at once. " * 40)
    second = ingest()
    assert second["quality"]["success"] and second["documents"]["indexed"] == 1
    assert server.running() == started  # found warm: no second server, no import in the run
    log = daemon.beside(server.base(), ".server.log").read_text()
    assert "serving data-quality checks" in log and "Traceback" not in log


def test_the_server_compiles_the_data_docs_templates_once_and_writes_the_same_pages(tmp_path, monkeypatch):
    import jinja2
    import pandas as pd
    from great_expectations.render.view import view

    from cairn.quality.checks import CompiledTemplates, validate
    from cairn.schemas.config import load_config
    from tests.unit.test_quality_expectations import row

    frame = pd.DataFrame([row(0, tokens=500), row(1, "child", tokens=150), row(2, tokens=2000)])
    config = load_config(write_config(tmp_path / "c.toml", tmp_path / "index", []))
    plain = validate(frame, config, 384, tmp_path / "plain")  # as a process without the cache checks
    monkeypatch.setattr(view, "Environment", view.Environment)  # put back after the test
    templates = CompiledTemplates()
    assert templates.install()  # as serve() does once
    compiled: list[str] = []
    compile_ = jinja2.Environment.compile

    def counted(env, source, name=None, filename=None, *args, **kwargs):
        compiled.append(str(filename))
        return compile_(env, source, name, filename, *args, **kwargs)

    monkeypatch.setattr(jinja2.Environment, "compile", counted)
    validate(frame, config, 384, tmp_path / "first")
    assert compiled and templates.compiled == len(compiled)
    compiled.clear()
    second = validate(frame, config, 384, tmp_path / "second")
    # the next run compiles only what lies in its own folder (its context's custom styles), the rest is served
    assert all(name.startswith(str(tmp_path / "second")) for name in compiled) and templates.hits > 0
    assert second.equals(plain)

    def pages(folder: Path) -> dict[str, str]:
        # run times in names and text, and the ids and element uuids great-expectations draws afresh for each page
        moments = (
            r"\d{8}T\d{6}(\.\d+)?Z|\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?Z?"
            r"|_run_time_sort.: [\d.]+|[0-9a-f-]{8,}"
        )
        return {
            re.sub(moments, "", p.relative_to(folder).as_posix()): re.sub(moments, "", p.read_text())
            for p in folder.rglob("*.html")
        }

    assert pages(tmp_path / "second") == pages(tmp_path / "plain") != {}  # page for page, but for run times
