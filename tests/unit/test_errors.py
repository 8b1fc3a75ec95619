"""cairn.errors: one answer to "whose fault is this error, and can trying again help", read by the ingest's
retries (flows/tasks.py) and by the blame of a store that refuses every document (flows/steps.py)."""

from __future__ import annotations

import pytest
from pymilvus.exceptions import DataNotMatchException, DataTypeNotMatchException, MilvusException, ParamError

from cairn.errors import (
    EXIT_FAILURES,
    CairnError,
    ConfigError,
    DocumentError,
    Fault,
    FilterError,
    IndexBusy,
    NoCollection,
    QualityFailed,
    RetrievalError,
    RowError,
    SourceError,
    SourcesFailed,
    StoreError,
    UsageError,
    fault_of,
)
from cairn.flows.steps import STORE_DOWN_AFTER, _each_document


@pytest.mark.parametrize(
    "exc",
    [
        ConfigError("c.toml: bad key"),
        UsageError("--since"),
        FilterError("filters"),
        SourceError("gone"),
        StoreError("damaged"),
        IndexBusy("held"),
        NoCollection("none"),
        RetrievalError("down"),
        SourcesFailed("failed: w", {}),
        QualityFailed("expectations failed"),
        CairnError("any"),
    ],
    ids=lambda exc: type(exc).__name__,
)
def test_cairn_errors_are_terminal_unless_their_kind_says_otherwise(exc):
    assert fault_of(exc) is Fault.TERMINAL


@pytest.mark.parametrize(
    "exc", [DocumentError("a.md", "not UTF-8"), RowError("tenant_id is 300 bytes")], ids=lambda exc: type(exc).__name__
)
def test_an_input_that_cannot_be_read_or_stored_is_a_fault_of_the_data(exc):
    assert fault_of(exc) is Fault.DATA


def test_a_kind_marked_transient_is_retried():
    class Throttled(StoreError):
        fault = Fault.TRANSIENT

    assert fault_of(Throttled("slow down")) is Fault.TRANSIENT


@pytest.mark.parametrize(
    "exc",
    [
        ParamError(message="invalid row"),
        DataNotMatchException(message="field missing"),
        DataTypeNotMatchException(message="not a float vector"),
        ValueError("bad value"),
        TypeError("bad type"),
    ],
    ids=lambda exc: type(exc).__name__,
)
def test_pymilvus_refusing_rows_client_side_and_a_plain_value_or_type_error_are_faults_of_the_data(exc):
    assert fault_of(exc) is Fault.DATA


@pytest.mark.parametrize(
    "exc",
    [
        MilvusException(code=2, message="server restarting"),
        ConnectionError("refused"),
        TimeoutError("timed out"),
        RuntimeError("an error Cairn does not know"),
    ],
    ids=lambda exc: type(exc).__name__,
)
def test_a_server_or_connection_error_and_an_unknown_one_are_worth_another_attempt(exc):
    assert fault_of(exc) is Fault.TRANSIENT


def test_an_interrupt_is_never_retried():
    assert fault_of(KeyboardInterrupt()) is Fault.TERMINAL


def test_row_error_is_a_cairn_error_that_fails_its_document_and_is_still_a_value_error():
    error = RowError("tenant_id is 300 bytes, over the 256 the index holds")
    assert isinstance(error, CairnError) and isinstance(error, ValueError)
    assert error.exit_code == EXIT_FAILURES and str(error) == "tenant_id is 300 bytes, over the 256 the index holds"


def test_rows_that_do_not_fit_raise_row_error_naming_the_field():
    from cairn.index.rows import RowError as RowsRowError
    from cairn.index.rows import fit_row
    from cairn.schemas.fields import VARCHAR_FIELDS
    from cairn.schemas.rows import ChunkRow

    assert RowsRowError is RowError
    row = ChunkRow(**{name: "x" for name in VARCHAR_FIELDS} | {"tenant_id": "t" * 300})
    with pytest.raises(RowError, match="tenant_id is 300 bytes"):
        fit_row(row)


def _refusing(errors: dict[str, Exception]):
    def action(item: str) -> None:
        raise errors[item]

    return action


def test_documents_refused_over_their_data_fail_alone_even_when_all_are_refused():
    work = {f"d{i}": f"d{i}" for i in range(STORE_DOWN_AFTER + 1)}
    refused = _each_document(work, _refusing({d: ParamError(message="bad row") for d in work}), None, "refused")
    assert sorted(refused) == sorted(work) and "ParamError" in refused["d0"]


def test_a_store_that_refuses_every_document_for_another_reason_is_blamed():
    work = {"d0": "d0", "d1": "d1"}
    with pytest.raises(MilvusException, match="server down"):
        _each_document(work, _refusing({d: MilvusException(code=2, message="server down") for d in work}), None, "x")


def test_a_store_refusing_the_first_documents_alike_is_blamed_without_asking_the_rest():
    asked = []

    def down(item: str) -> None:
        asked.append(item)
        raise ConnectionError("refused")

    with pytest.raises(ConnectionError):
        _each_document({f"d{i}": f"d{i}" for i in range(8)}, down, None, "x")
    assert len(asked) == STORE_DOWN_AFTER


def test_a_data_fault_among_the_first_refusals_keeps_the_store_from_being_blamed():
    errors = {
        "d0": ValueError("bad row"),
        **{f"d{i}": ConnectionError("refused") for i in range(1, STORE_DOWN_AFTER + 2)},
    }
    work = {d: d for d in [*errors, "ok"]}

    def action(item: str) -> None:
        if item in errors:
            raise errors[item]

    assert sorted(_each_document(work, action, None, "x")) == sorted(errors)


def test_a_write_the_storage_refuses_is_named_as_such_and_never_retried():
    import errno
    import sqlite3

    from pymilvus.exceptions import MilvusException

    from cairn.errors import storage_reason

    full = sqlite3.connect(":memory:")
    full.execute("create table t (x)")
    full.execute("pragma max_page_count = 2")  # a database that can grow no more: SQLite's own "disk is full"
    with pytest.raises(sqlite3.OperationalError) as sqlite_full:
        full.executemany("insert into t values (?)", [("x" * 1000,)] * 100)
    cases = {
        sqlite_full.value: "no space left on the device",
        OSError(errno.ENOSPC, "No space left on device"): "no space left on the device",
        OSError(errno.EROFS, "Read-only file system"): "the file system is read-only",
        MilvusException(message="failed to write segment: [Errno 28] No space left on device"): (
            "no space left on the device"
        ),
    }
    for exc, reason in cases.items():
        assert storage_reason(exc) == reason, exc
        assert fault_of(exc) is Fault.TERMINAL  # the same write fails again: no retry
    try:
        try:
            raise OSError(errno.EROFS, "Read-only file system")
        except OSError as cause:
            raise RuntimeError("the engine gave up") from cause
    except RuntimeError as chained:
        assert storage_reason(chained) == "the file system is read-only"
    assert storage_reason(OSError(errno.ECONNREFUSED, "Connection refused")) is None
    assert storage_reason(ValueError("not a storage problem")) is None
