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


def test_the_compiled_templates_kept_are_bounded_and_the_ones_in_use_stay():
    from cairn.quality.checks import CompiledTemplates

    class Bucket:  # what jinja2 hands a bytecode cache: a key, and the code to load or store
        def __init__(self, key: str) -> None:
            self.key, self.code = key, None

        def bytecode_from_string(self, code: bytes) -> None:
            self.code = code

        def bytecode_to_string(self) -> bytes:
            return f"code of {self.key}".encode()

    templates = CompiledTemplates(limit=3)
    for key in ("page", "index", "styles-run-1"):
        templates.dump(Bucket(key))
    used = Bucket("page")
    templates.load(used)  # a template every run renders
    assert used.code == b"code of page" and templates.hits == 1
    for run in range(2, 50):  # each run renders the page again and brings styles of its own
        templates.load(Bucket("page"))
        templates.dump(Bucket(f"styles-run-{run}"))
    assert len(templates.code) == 3 and {"page", "styles-run-49"} <= templates.code.keys()
    assert "index" not in templates.code and templates.hits == 49
    missing = Bucket("index")
    templates.load(missing)
    assert missing.code is None and templates.hits == 49  # let go: compiled again on its next use
