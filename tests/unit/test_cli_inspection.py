"""`cairn status` and `cairn report` (cli/inspection.py): their flags, and how they refuse an index that is not
there; over a real Lite index without the collection or damaged: tests/integration/test_cli_inspection.py; the
counts and the quality report over real rows: tests/integration (test_cli.py, test_quality.py)."""

from __future__ import annotations

from pathlib import Path

from cairn.cli.app import main
from tests.cli_args import parsed
from tests.conftest import write_config


def test_status_and_report_flags_parse_to_their_values():
    assert parsed("status", "--json", "--config", "c.toml")[1] == {"config": Path("c.toml"), "as_json": True}
    assert parsed("report", "--source", "w", "--tenant", "acme", "--json")[1] == {
        "config": None,
        "source": "w",
        "tenant": "acme",
        "as_json": True,
        "scan": False,
    }
    assert parsed("report", "--scan")[1]["scan"] is True


def test_status_before_any_ingest_says_to_ingest_and_prints_nothing_on_stdout(tmp_path, capsys):
    config = write_config(tmp_path / "c.toml", tmp_path / "index", [])
    assert main(["status", "--json", "--config", str(config)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "run `cairn ingest` first" in captured.err


def test_report_of_an_unknown_source_is_a_config_error(tmp_path, capsys):
    config = write_config(tmp_path / "c.toml", tmp_path / "index", [])
    assert main(["report", "--source", "nope", "--json", "--config", str(config)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "cairn: config error: no source named 'nope'" in captured.err


def test_an_index_path_that_is_a_file_is_named_as_such_not_as_in_use(tmp_path, capsys):
    from cairn.schemas.config import load_config

    config = write_config(tmp_path / "c.toml", tmp_path / "index", [])
    uri = Path(load_config(config).milvus.uri)
    uri.parent.mkdir(parents=True)
    uri.write_bytes(b"SQLite format 3\x00" + bytes(200))  # e.g. an index file of an older Milvus Lite
    assert main(["--config", str(config), "status"]) == 2
    err = capsys.readouterr().err
    assert "is a file, not a Milvus Lite index folder" in err and "in use" not in err and "Traceback" not in err
