"""`cairn status` over a real Lite index that is not what it should be (moved from tests/unit/test_cli_inspection.py:
each test starts the Lite server): a folder without the collection is named, a damaged one is one message saying
what to do, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.cli.app import main
from tests.conftest import write_config


@pytest.mark.core
def test_status_of_an_index_without_the_collection_names_it(tmp_path, capsys):
    from cairn.index.milvus import Connection
    from cairn.schemas.config import load_config

    config = write_config(tmp_path / "c.toml", tmp_path / "index", [], collection="runbooks")
    milvus = load_config(config).milvus
    Connection.open(milvus, create=True).close()  # an index folder with no collection in it
    assert main(["--config", str(config), "status"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cairn: no collection 'runbooks' at ") and "run `cairn ingest`" in err


@pytest.mark.core
def test_a_damaged_index_is_one_clear_message_with_what_to_do_not_a_traceback(tmp_path, capsys):
    from cairn.index import liteserver
    from cairn.index.store import MilvusStore
    from cairn.schemas.config import load_config

    config = write_config(tmp_path / "c.toml", tmp_path / "index", [], collection="runbooks")
    milvus = load_config(config).milvus
    store = MilvusStore(milvus, dim=8)
    store.ensure_collection()
    store.close()
    liteserver.stop(Path(milvus.uri))  # the damage is found when the engine next opens the folder
    (schema,) = Path(milvus.uri).glob("**/collections/runbooks/schema.json")
    schema.write_text("{ cut short")
    assert main(["--config", str(config), "status"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cairn: cannot open collection 'runbooks' at ") and "may be damaged" in err
    assert "cairn ingest --cleanup full" in err and "Traceback" not in err
