"""cairn/daemon.py with real processes standing in for the Milvus Lite and Prefect servers (a few lines of Python
that publish a record and sleep, quit, leave a zombie or hold the lease file while stopping); moved from
tests/unit/test_daemon.py, since each test starts processes. The record and leases alone: the unit test."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from cairn import daemon
from cairn.errors import CairnError


def sleeper(base) -> list[str]:
    """A server that serves nothing: it says where it 'listens', then waits to be stopped."""
    code = "from pathlib import Path; from cairn import daemon; import time\n"
    code += f"daemon.publish(Path({str(base)!r}), {{'url': 'nowhere'}})\ntime.sleep(120)\n"
    return [sys.executable, "-c", code]


@pytest.mark.core
def test_a_started_server_is_found_by_its_record_and_stopped_by_pid(tmp_path):
    base = tmp_path / "srv"
    assert daemon.running(base) is None
    record = daemon.connect(base, daemon.Server("the sleeper", sleeper(base), lambda r: True, lambda: "never"))
    try:
        assert record["url"] == "nowhere" and daemon.alive(record["pid"])
        assert daemon.running(base) == record and daemon.leases(base) == 1
        again = daemon.connect(base, daemon.Server("the sleeper", sleeper(base), lambda r: True, lambda: "never"))
        assert again["pid"] == record["pid"]  # the live one is reused, not a second started
        assert daemon.leases(base) == 2
    finally:
        daemon.release(base)
        daemon.release(base)
        assert daemon.stop(base) == record["pid"]
    assert not daemon.alive(record["pid"])
    assert daemon.stop(base) is None  # nothing left to stop


def slow_starter(base, delay: float) -> list[str]:
    """A server that claims its base, takes `delay` s to be ready (an import), then says where it 'listens'."""
    code = "from pathlib import Path; from cairn import daemon; import sys, time\n"
    code += f"base = Path({str(base)!r})\nheld = daemon.claim(base)\n"
    code += "if held is None:\n    sys.exit(daemon.ALREADY_SERVING)\n"
    code += f"time.sleep({delay})\ndaemon.publish(base, {{'url': 'slow'}})\ntime.sleep(120)\n"
    return [sys.executable, "-c", code]


def test_a_server_still_starting_when_its_starter_died_is_waited_for_not_doubled(tmp_path):
    # a run interrupted while its server imported: the server lives on, unpublished; the next run must not start
    # a second one beside it (two checks servers ran on one socket path, the first orphaned)
    base = tmp_path / "srv"
    first = subprocess.Popen(slow_starter(base, 3.0), start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not daemon.beside(base, ".serving").exists():  # it has claimed the base
            assert time.monotonic() < deadline and first.poll() is None
            time.sleep(0.05)
        time.sleep(0.3)
        assert daemon.running(base) is None  # not published yet: what the next starter finds
        record = daemon.connect(base, daemon.Server("the slow one", slow_starter(base, 0.0), lambda r: True, str))
        assert record["pid"] == first.pid  # the second server left at once; the first one's record was waited for
        daemon.release(base)
    finally:
        first.kill()
        first.wait()


def test_a_server_that_claimed_its_base_and_died_before_serving_fails_the_next_start_not_hangs_it(tmp_path):
    base = tmp_path / "srv"
    code = "from pathlib import Path; from cairn import daemon; import time\n"
    code += f"held = daemon.claim(Path({str(base)!r}))\nassert held\nPath({str(tmp_path / 'claimed')!r}).touch()\n"
    code += "time.sleep(2)\nraise SystemExit(1)\n"  # an import that fails
    orphan = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "claimed").exists():
            assert time.monotonic() < deadline and orphan.poll() is None
            time.sleep(0.05)
        assert daemon.claimed(base)
        # before: the start waited for a record no one would write, until its 600 s hang guard
        with pytest.raises(CairnError, match="it never served"):
            daemon.connect(
                base, daemon.Server("the slow one", slow_starter(base, 0.0), lambda r: True, lambda: "it never served")
            )
    finally:
        orphan.kill()
        orphan.wait()


@pytest.mark.core
def test_a_server_that_exits_before_serving_fails_with_its_diagnosis(tmp_path):
    base = tmp_path / "srv"
    quits = [sys.executable, "-c", "raise SystemExit(3)"]
    with pytest.raises(CairnError, match="the folder is locked"):
        daemon.connect(base, daemon.Server("the quitter", quits, lambda r: True, lambda: "the folder is locked"))
    assert daemon.leases(base) == 0  # no lease is kept on a server that never served


# A parent that never reaps its child, as in a container without an init: the child exits and stays a zombie.
NEGLECTFUL = """
import os, sys, time
child = os.fork()
if child == 0:
    os._exit(0)
print(child, flush=True)
time.sleep(60)
"""


@pytest.mark.core
def test_a_server_left_a_zombie_by_a_parent_that_never_reaps_it_is_not_alive():
    parent = subprocess.Popen([sys.executable, "-c", NEGLECTFUL], stdout=subprocess.PIPE, text=True)
    try:
        zombie = int(parent.stdout.readline())
        deadline = time.monotonic() + 10
        while open(f"/proc/{zombie}/stat").read().rsplit(")", 1)[1].split()[0] != "Z":
            assert time.monotonic() < deadline, "the child never exited"
            time.sleep(0.01)
        assert not daemon.alive(zombie)  # signal 0 reaches it; it serves nothing
        assert daemon.alive(parent.pid)
    finally:
        parent.kill()
        parent.wait()


# A server stopping, holding the lease file exclusively until it exits: here, until told on stdin.
STOPPING = """
import fcntl, sys
handle = open(sys.argv[1], "a+")
fcntl.flock(handle, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.readline()
"""


@pytest.mark.core
def test_a_lease_waits_for_a_stopping_server_to_exit_but_not_for_ever(tmp_path, monkeypatch):
    base = tmp_path / "index" / "cairn.db"
    base.parent.mkdir()
    monkeypatch.setattr(daemon, "STOP_WAIT_SECONDS", 0.5)
    stopping = subprocess.Popen(
        [sys.executable, "-c", STOPPING, str(daemon.beside(base, ".clients"))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert stopping.stdout.readline().strip() == "held"
        with pytest.raises(CairnError, match=r"has been stopping for over 0.5 s without exiting .*cairn.db.clients"):
            daemon.take_lease(base)  # it never exits: the command says so instead of hanging
        assert daemon.leases(base) == 0
        monkeypatch.setattr(daemon, "STOP_WAIT_SECONDS", 60.0)
        threading.Timer(0.3, lambda: (stopping.stdin.write("exit\n"), stopping.stdin.flush())).start()
        daemon.take_lease(base)  # it exits while the lease waits: the lease is taken
        assert daemon.leases(base) == 1
    finally:
        daemon.release(base)
        stopping.kill()
        stopping.wait()
