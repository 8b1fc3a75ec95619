"""The derived ledger (index/derived.py) against real components: the file a run keeps beside the collection holds
what a full scan of the collection finds; it is rebuilt from the collection when deleted, damaged, or left behind
by a write it did not see; and rows changed behind Cairn's back are found by `cairn reconcile --scan` and repaired
by `--fix`. Milvus Lite, real Prefect runs, the real model."""

from __future__ import annotations

import json

import pytest

from cairn.cli.app import main
from cairn.flows.ingest import ingest_flow
from cairn.index.derived import DerivedLedger, collection_mark, in_step_ledger, ledger_file
from cairn.index.generations import open_serving
from cairn.index.ledger import collection_ledger
from cairn.index.milvus import Connection
from cairn.index.store import MilvusStore
from cairn.quality.frames import FIELDS
from cairn.schemas import ChunkType
from cairn.schemas.config import load_config
from cairn.schemas.row_figures import figures
from tests.integration import corpus
from tests.integration.test_incremental import make_config

SOURCES = ("acme-wiki", "globex-wiki")


@pytest.fixture
def indexed(tmp_path, prefect_server):
    root = tmp_path / "wiki"
    corpus.build(root)
    config_path = make_config(tmp_path, root)
    first = ingest_flow(config_path=str(config_path))
    assert first["documents"]["indexed"] == 4
    return config_path


def assert_matches_the_collection(config) -> None:
    """The file is in step, and its ledgers, counts and figures are what a scan of the collection reads."""
    with open_serving(config.milvus) as reader, in_step_ledger(config.ledger_folder, reader) as derived:
        assert derived is not None, "the derived ledger is not in step with the collection"
        for source in SOURCES:
            assert derived.ledger(source) == collection_ledger(reader, source)
        assert derived.counts() == reader.counts()
        scanned = sorted(
            (figures(row) for row in reader.iterate("is_current == true", FIELDS)), key=lambda f: f["chunk_id"]
        )
        assert sorted(derived.figures(), key=lambda f: f["chunk_id"]) == scanned


def ledger_path(config):
    with open_serving(config.milvus) as reader:
        return ledger_file(config.ledger_folder, reader.config)


def test_a_run_keeps_the_derived_ledger_equal_to_the_collection(indexed, tmp_path):
    config = load_config(indexed)
    assert_matches_the_collection(config)
    page = tmp_path / "wiki" / "acme" / "kafka-lag.md"
    page.write_text(page.read_text() + "\nAlso check the partition count of payments.settled.\n")
    (tmp_path / "wiki" / "acme" / "leaked-credentials.md").unlink()
    second = ingest_flow(config_path=str(indexed))
    assert second["documents"]["indexed"] == 1 and second["documents"]["deleted"] == 1
    assert_matches_the_collection(config)


def test_the_ledger_is_rebuilt_after_deletion_damage_and_a_write_it_did_not_see(indexed, tmp_path):
    config = load_config(indexed)
    path = ledger_path(config)

    path.unlink()  # deleted: the next run rebuilds it from the collection, and finds nothing to do
    assert ingest_flow(config_path=str(indexed))["documents"]["unchanged"] == 4
    assert_matches_the_collection(config)

    path.write_bytes(b"not a ledger" * 1000)  # damaged: set aside and rebuilt
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    assert ingest_flow(config_path=str(indexed))["documents"]["unchanged"] == 4
    assert path.with_name(path.name + ".damaged").exists()
    assert_matches_the_collection(config)

    store = MilvusStore(config.milvus, dim=384)  # a writer that keeps no derived ledger (a script, another state dir)
    store.ensure_collection()
    child = next(
        row
        for row in store.iterate('locator == "kafka-lag.md"', ["chunk_id", "chunk_type"])
        if row.chunk_type == ChunkType.CHILD.value
    )
    store.delete_chunks([child.chunk_id])
    store.flush()
    store.close()
    repaired = ingest_flow(config_path=str(indexed))  # its write cleared the mark: the run reads the collection
    assert repaired["documents"]["indexed"] == 1 and repaired["documents"]["unchanged"] == 3
    assert_matches_the_collection(config)


def test_rows_deleted_behind_cairns_back_are_found_by_reconcile_scan_and_repaired_by_fix(indexed, capsys):
    config = load_config(indexed)
    with Connection.open(config.milvus, create=False) as connection:  # pymilvus itself: no mark is touched
        with open_serving(config.milvus) as reader:
            collection = reader.collection
            rows = list(reader.iterate('locator == "ledger-failover.md"', ["chunk_id", "chunk_type"]))
        mark = collection_mark(connection.client, collection)
        parent = next(row.chunk_id for row in rows if row.chunk_type == ChunkType.FULL_TEXT.value)
        connection.client.delete(collection, ids=[parent])
        connection.client.flush(collection)
        assert collection_mark(connection.client, collection) == mark

    # what the marks cannot see, a run cannot either: it trusts the file and finds nothing to do
    assert ingest_flow(config_path=str(indexed))["documents"]["unchanged"] == 4

    assert main(["reconcile", "--json", "--config", str(indexed)]) == 0  # nor does reconcile, reading the file
    assert json.loads(capsys.readouterr().out)["ledger"] == {
        "in_step": True,
        "scanned": False,
        "differing": 0,
        "examples": [],
        "trusted": True,
    }
    assert main(["reconcile", "--scan", "--json", "--config", str(indexed)]) == 1  # row by row, it does
    scanned = json.loads(capsys.readouterr().out)
    assert scanned["ledger"]["scanned"] and scanned["ledger"]["differing"] == 1
    assert scanned["ledger"]["examples"] == [parent] and not scanned["ledger"]["trusted"]
    (acme,) = [drift for drift in scanned["sources"] if drift["source"] == "acme-wiki"]
    assert list(acme["incomplete"]) == ["ledger-failover.md"]  # and the sources compared with the collection

    assert main(["reconcile", "--fix", "--json", "--config", str(indexed)]) == 0
    fixed = json.loads(capsys.readouterr().out)
    assert fixed["clean"] and fixed["ledger_after_fix"]["trusted"] and fixed["ledger_after_fix"]["differing"] == 0
    assert_matches_the_collection(config)
    with open_serving(config.milvus) as reader:  # a full scan: the document is whole again, no orphan rows
        ledger = collection_ledger(reader, "acme-wiki")
        assert all(not doc.problems() for doc in ledger.values()) and len(ledger) == 3
        chunk_ids = {row.chunk_id for row in reader.iterate("", ["chunk_id"])}
    assert parent in chunk_ids


def test_status_and_report_read_the_ledger_and_say_so(indexed, capsys):
    config = load_config(indexed)
    assert main(["status", "--json", "--config", str(indexed)]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["counted_from"] == "derived ledger"
    with open_serving(config.milvus) as reader:
        scanned = reader.counts()
    assert {(r["tenant"], r["source"], r["chunk_type"]): r["rows"] for r in status["rows"]} == dict(scanned)

    ledger_path(config).unlink()  # a reader never rebuilds it: it counts from the collection instead
    assert main(["status", "--json", "--config", str(indexed)]) == 0
    assert json.loads(capsys.readouterr().out)["counted_from"] == "collection scan"
    assert not ledger_path(config).exists()

    ingest_flow(config_path=str(indexed))  # rebuilt by the writer
    assert main(["report", "--json", "--config", str(indexed)]) in (0, 1)
    from_ledger = json.loads(capsys.readouterr().out)
    assert main(["report", "--scan", "--json", "--config", str(indexed)]) in (0, 1)
    from_scan = json.loads(capsys.readouterr().out)
    assert from_ledger["rows"] == from_scan["rows"] == sum(scanned.values())
    verdicts = lambda report: [(r["suite"], r["column"], r["success"], r["element_count"]) for r in report["results"]]  # noqa: E731
    assert verdicts(from_ledger) == verdicts(from_scan)


def test_a_derived_ledger_of_another_format_is_left_alone_by_readers_and_rebuilt_by_the_writer(indexed, capsys):
    import sqlite3

    config = load_config(indexed)
    path = ledger_path(config)
    with DerivedLedger(path) as derived:
        with derived._db:
            derived._db.execute("update meta set value = '0' where key = 'format'")
    before = sqlite3.connect(path).execute("select count(*) from chunk").fetchone()[0]
    assert before > 0
    assert main(["status", "--json", "--config", str(indexed)]) == 0  # a reader (another Cairn's file, mid-upgrade)
    assert json.loads(capsys.readouterr().out)["counted_from"] == "collection scan"
    assert sqlite3.connect(path).execute("select count(*) from chunk").fetchone()[0] == before, "left as it was"
    with DerivedLedger(path) as reopened:  # a writer: emptied and unsealed
        assert reopened.mark == "" and reopened.counts() == {}
    assert ingest_flow(config_path=str(indexed))["documents"]["unchanged"] == 4
    assert_matches_the_collection(config)
