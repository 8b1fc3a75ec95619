"""quality/server.py's pure parts: where its files may live, how it names the code it runs, when it stops for
changed code. Its process, sockets and leases: tests/integration/test_quality_server.py."""

from __future__ import annotations

import os
import sys
import tempfile

import pytest

from cairn.errors import CairnError
from cairn.quality import server
from cairn.schemas.quality_config import QualityConfig


def test_the_private_folder_is_made_for_this_user_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folder = server.private_folder()
    assert folder == tmp_path / f"cairn-{os.getuid()}"
    assert folder.stat().st_mode & 0o777 == 0o700


def test_a_private_folder_others_can_enter_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    (tmp_path / f"cairn-{os.getuid()}").mkdir(mode=0o755)
    os.chmod(tmp_path / f"cairn-{os.getuid()}", 0o755)  # whatever the umask
    with pytest.raises(CairnError, match="mode 700"):
        server.private_folder()


def test_the_code_fingerprint_is_stable_and_names_the_interpreter(monkeypatch):
    first = server.code_fingerprint()
    assert first == server.code_fingerprint() and len(first) == 16
    monkeypatch.setattr(sys, "executable", sys.executable + "-another")
    assert server.code_fingerprint() != first  # another interpreter (another virtualenv): a server of its own


def test_two_names_of_one_interpreter_share_a_server_and_another_environment_gets_its_own(tmp_path, monkeypatch):
    first = server.code_fingerprint()
    (tmp_path / "python3").symlink_to(os.path.realpath(sys.executable))  # as a virtualenv's python and python3
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python3"))
    assert server.code_fingerprint() == first
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "another-venv"))  # the same interpreter, other packages
    assert server.code_fingerprint() != first


def test_a_server_stops_once_the_code_on_disk_is_not_its_own(monkeypatch):
    monkeypatch.setattr(server, "CODE_CHECK_SECONDS", 0.0)
    monkeypatch.setattr(server, "code_fingerprint", lambda: "the code now")
    assert server._same_code("the code now")()
    assert not server._same_code("the code it started with")()


def test_the_code_is_compared_at_most_every_few_seconds(monkeypatch):
    asked = []
    monkeypatch.setattr(server, "code_fingerprint", lambda: asked.append(1) or "changed")
    valid = server._same_code("started")
    assert all(valid() for _ in range(100)) and not asked  # within CODE_CHECK_SECONDS: not looked at


def test_the_idle_time_of_the_checks_server_is_a_setting_that_refuses_a_negative_one():
    assert QualityConfig().worker_idle_seconds == 900.0
    assert QualityConfig(worker_idle_seconds=0).worker_idle_seconds == 0.0
    with pytest.raises(ValueError, match="worker_idle_seconds"):
        QualityConfig(worker_idle_seconds=-1)
