"""flows.noop: an ingest that would change nothing is answered without a flow run (and without the temporary
Prefect server a flow run starts from the shell); anything else still runs the flow."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from cairn.flows.ingest import ingest_flow
from cairn.flows.noop import unchanged_run
from cairn.flows.options import RunOptions, Window
from cairn.schemas.config import load_config
from cairn.schemas.run_report import RunReport
from tests.conftest import REPO
from tests.integration import corpus


def unchanged_without_a_server(config, options: RunOptions | None = None) -> RunReport | None:
    """unchanged_run with no Prefect server configured, as from a shell (the session's test server stays
    configured for the flow runs around it)."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(restore_defaults={PREFECT_API_URL}):
        return unchanged_run(config, options=options)


def test_unchanged_sources_give_the_report_without_a_flow_and_any_change_gives_none(
    tmp_path, prefect_server, monkeypatch
):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    root, config_path = corpus.acme_wiki(tmp_path)
    config = load_config(config_path)
    assert unchanged_without_a_server(config) is None  # no collection yet: the flow creates it
    first = ingest_flow(config_path=str(config_path))
    report = unchanged_without_a_server(config)
    assert report is not None and report.run_id.startswith("unchanged-")
    assert report.documents.unchanged == report.documents.seen == first["documents"]["indexed"]
    assert report.embeddings_computed == 0 and report.rows_written == 0
    backfill = RunOptions(backfill=Window())
    assert unchanged_without_a_server(config, backfill) is None  # a backfill re-processes on purpose
    assert unchanged_run(config) is None  # with a Prefect server (the test server) every run is recorded as a flow run
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    assert unchanged_without_a_server(config) is None  # a server named in the environment, Prefect imported or not
    monkeypatch.delenv("PREFECT_API_URL")

    broken = root / "broken.md"
    broken.write_bytes(b"\x00\x01")
    assert unchanged_without_a_server(config) is None  # a page not yet indexed: a flow run tries it
    broken.unlink()
    page = sorted(root.rglob("*.md"))[0]
    page.write_text(page.read_text() + "\nOne more line.\n")
    assert unchanged_without_a_server(config) is None  # an edit: work to do
    ingest_flow(config_path=str(config_path))
    page.unlink()
    assert unchanged_without_a_server(config) is None  # a removal: work to do


def test_an_unchanged_ingest_from_the_shell_starts_no_prefect_server(tmp_path, prefect_server):
    _, config = corpus.acme_wiki(tmp_path)
    first = ingest_flow(config_path=str(config))
    home = tmp_path / "prefect-home"  # where a temporary Prefect server would put its database
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"} | {"PREFECT_HOME": str(home)}
    again = subprocess.run(
        [sys.executable, "-m", "cairn.cli", "ingest", "--config", str(config), "--json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["documents"]["unchanged"] == first["documents"]["indexed"] > 0
    assert report["embeddings_computed"] == 0
    assert not list(home.rglob("*.db")), "a Prefect server was started for a run with nothing to do"


def _wiki_and_pagerduty(tmp_path, api_url: str):
    """The acme wiki and a PagerDuty source `pd` over `api_url`, in one config."""
    from tests.conftest import write_config

    corpus.build(tmp_path / "wiki")
    pd = {"name": "pd", "type": "pagerduty", "api_url": api_url, "token_env": "CAIRN_TEST_PD_TOKEN", "tenant": "acme"}
    wiki = {"name": "w", "type": "wiki", "path": str(tmp_path / "wiki" / "acme"), "tenant": "acme"}
    sources = [{**wiki, "acl": ["sre"], "acl_ceiling": corpus.ACME_GROUPS}, {**pd, "acl": ["sre"]}]
    return write_config(tmp_path / "c.toml", tmp_path / "index", sources)


def test_the_no_op_check_lists_outside_the_writer_lock(tmp_path, prefect_server, monkeypatch):
    import threading

    from cairn.index.lock import writer_lock
    from tests.integration.test_pagerduty import sample
    from tests.pagerduty_server import TOKEN, FakePagerDuty

    monkeypatch.setenv("CAIRN_TEST_PD_TOKEN", TOKEN)
    with FakePagerDuty(*sample()) as api:
        config_path = _wiki_and_pagerduty(tmp_path, api.url)
        ingest_flow(config_path=str(config_path))
        config = load_config(config_path)
        api.faults["/log_entries"] = ["hold"]  # the check's listing of pd (since its mark) waits on the API
        answers: list = []
        check = threading.Thread(target=lambda: answers.append(unchanged_without_a_server(config)), daemon=True)
        check.start()
        try:
            for _ in range(3000):  # a hang guard
                if "/log_entries" in api.paths():
                    break
                check.join(0.1)
            assert "/log_entries" in api.paths()
            with writer_lock(config.milvus, 0.0):  # free while the check lists: another run could write
                pass
        finally:
            api.release.set()
        check.join(300)
    assert answers and answers[0] is not None  # and then it answered: nothing to do
    assert answers[0].per_source["w"].documents.unchanged == 3 and answers[0].per_source["pd"].status == "ok"


def test_a_source_whose_listing_failed_in_the_runs_first_step_is_not_listed_again_by_the_run(
    tmp_path, prefect_server, monkeypatch
):
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from cairn.errors import SourcesFailed
    from cairn.flows.options import RunOptions
    from cairn.flows.run import run_sources
    from tests.integration.test_pagerduty import sample
    from tests.pagerduty_server import FakePagerDuty

    monkeypatch.setenv("CAIRN_TEST_PD_TOKEN", "a token the API refuses")
    with FakePagerDuty(*sample()) as api:
        config_path = _wiki_and_pagerduty(tmp_path, api.url)
        with pytest.raises(SourcesFailed):  # the first run: the wiki written, pd refused
            ingest_flow(config_path=str(config_path))
        config = load_config(config_path)
        with temporary_settings(restore_defaults={PREFECT_API_URL}):  # as from a shell: the check runs first
            asked = len(api.requests)
            assert unchanged_run(config) is None  # pd's listing fails in the check alone
            one_listing = len(api.requests) - asked
            asked = len(api.requests)
            report = run_sources(config, None, RunOptions())  # the check is its first step
        assert one_listing > 0 and len(api.requests) - asked == one_listing  # pd not listed a second time
    assert [(f.source, f.document) for f in report.failures] == [("pd", "*")]
    assert "401 Unauthorized" in report.per_source["pd"].error and report.failed_sources == ["pd"]
    assert report.per_source["w"].documents.unchanged == 3 and report.per_source["w"].status == "ok"
