"""A report over what changed (issue #35): each row's check outcome is kept in the derived ledger by the check
that made it, so `cairn report` runs great-expectations only over rows no one checked under today's
expectations, counts the rest, and says what a full scan (`--scan`) says. Real great-expectations, Milvus Lite,
Prefect runs and the model."""

from __future__ import annotations

import json
import logging

import pandas as pd
import pytest

from cairn.cli.app import main
from cairn.flows.ingest import ingest_flow
from cairn.index.derived import ledger_file
from cairn.index.generations import open_serving
from cairn.quality.checks import validate
from cairn.schemas.config import load_config
from tests.conftest import write_config
from tests.integration import corpus

SOURCES = [
    {"name": "runbooks", "type": "wiki", "tenant": "acme", "acl": ["sre"], "acl_ceiling": corpus.ACME_GROUPS},
    {"name": "notes", "type": "wiki", "tenant": "globex", "acl": ["globex-ops"]},
]


@pytest.fixture
def checked(tmp_path, prefect_server):
    """Two sources' pages ingested with the check after ingest on: every row checked once, by that run."""
    root = tmp_path / "wiki"
    corpus.build(root)
    sources = [{**SOURCES[0], "path": str(root / "acme")}, {**SOURCES[1], "path": str(root / "globex")}]
    config_path = write_config(tmp_path / "c.toml", tmp_path / "index", sources, quality={"on_ingest": True})
    run = ingest_flow(config_path=str(config_path))
    assert run["documents"]["indexed"] == 4 and run["quality"]["success"] is not None
    return config_path


def report(capsys, config_path, *flags) -> dict:
    assert main(["report", "--json", "--config", str(config_path), *flags]) in (0, 1)
    return json.loads(capsys.readouterr().out)


def verdicts(summary: dict) -> list[tuple]:
    return [
        (r["suite"], r["column"], r["success"], r["element_count"], round(r["unexpected_percent"], 3))
        for r in summary["results"]
    ]


def rows_in_collection(config_path) -> int:
    with open_serving(load_config(config_path).milvus) as reader:
        return sum(reader.counts().values())


@pytest.mark.core
def test_a_report_checks_only_rows_no_one_checked_and_says_what_a_full_scan_says(checked, tmp_path, capsys):
    total = rows_in_collection(checked)
    first = report(capsys, checked)
    assert (first["checked_now"], first["unchecked"], first["rows"]) == (0, 0, total), "the ingest checked them all"
    scan = report(capsys, checked, "--scan")
    assert scan["checked_now"] == scan["rows"] == total
    assert verdicts(first) == verdicts(scan) and first["success"] == scan["success"]

    # one page edited: the run checks its rows, and the report after it still checks nothing
    page = tmp_path / "wiki" / "acme" / "kafka-lag.md"
    page.write_text(page.read_text() + "\n## Verify\n\nConsumer lag stays under one thousand messages.\n")
    run = ingest_flow(config_path=str(checked))
    assert run["documents"]["indexed"] == 1
    after = report(capsys, checked)
    assert after["checked_now"] == 0 and verdicts(after) == verdicts(report(capsys, checked, "--scan"))

    # one source's parent band narrowed: exactly its rows are checked again, under the new band
    narrowed = checked.with_name("narrow.toml")
    narrowed.write_text(
        checked.read_text().replace(
            "[quality]\n", "[quality]\noverrides = { notes = { parent_min_tokens = 100, parent_max_tokens = 120 } }\n"
        )
    )
    notes = after["per_source"]["notes"]["rows"]
    again = report(capsys, narrowed)
    assert again["checked_now"] == notes and verdicts(again) == verdicts(report(capsys, narrowed, "--scan"))
    assert any(not r["success"] for r in again["results"] if r["suite"] == "notes.document")
    assert report(capsys, narrowed)["checked_now"] == 0


def test_after_the_derived_ledger_is_rebuilt_the_next_report_checks_every_row_once(checked, capsys):
    config = load_config(checked)
    with open_serving(config.milvus) as reader:
        ledger_file(config.ledger_folder, reader.config).unlink()
    ingest_flow(config_path=str(checked))  # the writer rebuilds it from the collection: no outcomes in it
    total = rows_in_collection(checked)
    assert report(capsys, checked)["checked_now"] == total
    assert report(capsys, checked)["checked_now"] == 0


def test_a_check_that_cannot_run_fails_every_row_it_looks_at(tmp_path, caplog):
    from tests.unit.test_quality_expectations import row

    frame = pd.DataFrame([row(0, tokens=500), row(1, tokens=600)])
    config = load_config(write_config(tmp_path / "c.toml", tmp_path / "index", []))
    upside_down = config.model_copy(
        update={
            "quality": config.quality.model_copy(
                update={"overrides": {"wiki": {"parent_min_tokens": 900, "parent_max_tokens": 100}}}
            )
        }
    )
    outcome = validate(frame, upside_down, 384, tmp_path / "gx")
    band = 1 << 17
    assert all(m & band for m in outcome["failed"]) and "could not run" in caplog.text


def test_cairns_counts_agree_with_great_expectations_on_every_check_of_a_hostile_frame(tmp_path, caplog):
    from tests.unit.test_quality_expectations import row

    rows = [
        row(0, tokens=120, whole_document=True),
        row(1, tokens=None),  # no count: missing to the band, not a failure
        row(2, tokens=2000, chunk_health_score=None, tenant_id=None),
        row(3, "child", tokens=10, is_remainder=True, temporal_end=None),  # one side of the pair missing
        row(4, "child", tokens=150, temporal_end=None, temporal_start=None),  # both missing: skipped
        row(5, "child", tokens=400, environment="moon", abstract_embedding_dim=12, parent_exists=False),
        row(6, tokens=500, abstract_token_count=None, content_type="incident", source_name="pd"),
        row(7, tokens=500, chunk_id="c6", content_type="incident", source_name="pd"),  # a duplicate id
    ]
    frame = pd.DataFrame(rows)
    config = load_config(write_config(tmp_path / "c.toml", tmp_path / "index", []))
    with caplog.at_level(logging.WARNING, logger="cairn.quality.checks"):
        outcome = validate(frame, config, 384, tmp_path / "gx")
    assert "Cairn counted" not in caplog.text
    assert len(outcome) == len(frame) and (outcome["failed"] & ~outcome["checked"]).eq(0).all()
    assert outcome["failed"].ne(0).sum() >= 5
