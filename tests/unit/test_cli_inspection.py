"""`cairn status` and `cairn report` (cli/inspection.py): their flags, and how they refuse a collection that is
not there; the counts and the quality report over real rows: tests/integration (test_cli.py, test_quality.py)."""
from __future__ import annotations

from pathlib import Path

from cairn.cli.app import main
from tests.cli_args import parsed
from tests.conftest import write_config


def test_status_and_report_flags_parse_to_their_values():
    assert parsed("status", "--json", "--config", "c.toml")[1] == {"config": Path("c.toml"), "as_json": True}
    assert parsed("report", "--source", "w", "--tenant", "acme", "--json")[1] == {
        "config": None, "source": "w", "tenant": "acme", "as_json": True}


def test_status_before_any_ingest_says_to_ingest_and_prints_nothing_on_stdout(tmp_path, capsys):
    config = write_config(tmp_path / "c.toml", tmp_path / "index", [])
    assert main(["status", "--json", "--config", str(config)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "run `cairn ingest` first" in captured.err


def test_status_of_an_index_without_the_collection_names_it(tmp_path, capsys):
    from cairn.index.milvus import open_client
    from cairn.schemas.config import load_config

    config = write_config(tmp_path / "c.toml", tmp_path / "index", [], collection="runbooks")
    open_client(load_config(config).milvus, create=True).close()  # an index folder with no collection in it
    assert main(["--config", str(config), "status"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cairn: no collection 'runbooks' at ") and "run `cairn ingest`" in err


def test_report_of_an_unknown_source_is_a_config_error(tmp_path, capsys):
    config = write_config(tmp_path / "c.toml", tmp_path / "index", [])
    assert main(["report", "--source", "nope", "--json", "--config", str(config)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "cairn: config error: no source named 'nope'" in captured.err
