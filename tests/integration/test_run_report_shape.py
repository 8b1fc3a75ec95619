"""The `--json` shape of `cairn ingest` is a contract: on a real run of the sample corpus (a copy of data/, as
`make demo` ingests it) the run report holds these keys, in this order, per source, for the index and for the
data-quality check; and so does the report of the unchanged run that follows (flows/noop.py)."""

from __future__ import annotations

import json

import pytest

from cairn.cli.app import main
from tests.conftest import sample_copy
from tests.unit.test_schemas_run_report import COUNTS, PER_SOURCE, TOP

SAMPLE_SOURCES = ["runbooks", "globex-wiki", "incidents", "contracts", "infra"]


def ingest_json(config, capsys) -> tuple[int, dict]:
    """`cairn ingest --json` in this process, with no Prefect API configured (as from a shell): its exit code
    and the run report it printed."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(restore_defaults={PREFECT_API_URL}):
        code = main(["ingest", "--config", str(config), "--json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.slow
def test_the_ingest_json_of_the_sample_corpus_keeps_its_keys(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    config = sample_copy(tmp_path)

    code, first = ingest_json(config, capsys)
    assert code == 0 and list(first) == TOP and list(first["documents"]) == COUNTS
    assert first["sources"] == list(first["per_source"]) == SAMPLE_SOURCES
    assert all(list(part) == PER_SOURCE for part in first["per_source"].values())
    assert list(first["index"]) == ["collection", "serving"] and first["index"]["serving"].startswith("cairn")
    assert list(first["quality"]) == ["success", "report_dir", "failed", "seconds"] and first["quality"]["success"]
    assert first["documents"]["indexed"] > 0 and first["failures"] == [] and first["failed_sources"] == []

    code, again = ingest_json(config, capsys)  # nothing changed: the no-op check's report (flows/noop.py)
    assert code == 0 and list(again) == TOP and again["run_id"].startswith("unchanged-")
    assert again["documents"]["unchanged"] == again["documents"]["seen"] > 0 == again["documents"]["indexed"]
    # #50: the same documents are seen on both runs; the git source's past versions the first run loaded beside
    # them (keep_history) are history versions, not documents seen (it was 42 seen, then 38)
    assert again["documents"]["seen"] == first["documents"]["seen"]
    assert first["documents"]["history_versions"] > 0 == again["documents"]["history_versions"]
    assert first["per_source"]["infra"]["history_versions"] == first["documents"]["history_versions"]
    assert all(list(part) == PER_SOURCE for part in again["per_source"].values())
    assert again["index"] == {"collection": first["index"]["collection"], "serving": first["index"]["serving"]}
    assert again["quality"] is None
