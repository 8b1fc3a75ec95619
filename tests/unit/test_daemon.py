"""cairn/daemon.py: a shared server's record and leases, in this process. Its start, stop and liveness checks with
real processes standing in for the Milvus Lite and Prefect servers: tests/integration/test_daemon.py."""

from __future__ import annotations

import threading

from cairn import daemon


def test_a_record_whose_process_is_gone_is_stale(tmp_path):
    base = tmp_path / "srv"
    daemon.beside(base, ".server").write_text('{"pid": 999999999, "url": "x"}')
    assert daemon.running(base) is None


def test_leases_count_per_process_and_the_server_waits_until_none_is_held(tmp_path):
    base = tmp_path / "srv"
    daemon.take_lease(base)
    daemon.take_lease(base)
    assert daemon.leases(base) == 2
    idle = threading.Event()
    watcher = threading.Thread(
        target=lambda: (daemon.wait_idle(base, 0.0, threading.Event(), lambda: True).close(), idle.set())
    )
    watcher.start()
    daemon.release(base)
    assert daemon.leases(base) == 1
    # idle at once when free: the watcher's first look (0.5 s in) would have stopped it had the lease been dropped
    assert not idle.wait(1.0), "the server stopped while a lease was held"
    daemon.release(base)  # the last one: the lock is dropped
    assert daemon.leases(base) == 0
    watcher.join(30)  # a hang guard
    assert idle.is_set()


def test_a_server_with_nothing_left_to_serve_stops_at_once(tmp_path):
    base = tmp_path / "srv"
    daemon.take_lease(base)
    try:
        daemon.wait_idle(base, 3600, threading.Event(), valid=lambda: False).close()  # returns: no hang
    finally:
        daemon.release(base)
