"""Text from documents and callers printed for a person has its control characters escaped, and `cairn new-key`
prints TOML that always loads (issue #51: a file name with ESC sequences and a newline erased the FAILED line and
printed a forged `data quality: passed`; a group outside the BMP was printed as a JSON surrogate pair TOML
refuses)."""

from __future__ import annotations

import logging
import tomllib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn.cli.app import _Printable, main
from cairn.cli.ingest import print_run_report
from cairn.printable import printable
from cairn.schemas.run_report import RunReport

FORGED = "page\x1b[2K\x1b[1A\r\ndata quality: passed\n\u202e.md"


def report(document: str) -> RunReport:
    counts = {"seen": 1, "indexed": 0, "unchanged": 0, "skipped": 0, "deleted": 0, "failed": 1}
    return RunReport.from_dict(
        {
            "run_id": "r",
            "documents": counts,
            "sections": 0,
            "chunks": 0,
            "tokens": 0,
            "embeddings_computed": 0,
            "seconds": 1.0,
            "model_seconds": 0.0,
            "chunks_per_second": 0.0,
            "quality": {"success": False, "failed": [f"chunk size of {document}"], "report_dir": "reports/\x1b[31mx"},
            "failures": [{"source": "wiki\x07", "document": document, "error": "cannot parse\r\nFAILED nothing"}],
            "skipped": [{"source": "wiki", "document": document, "reason": "empty", "read": True}],
            "warnings": [{"source": "wiki", "document": document, "error": "no text\x1b]0;title\x07"}],
        }
    )


def test_a_file_name_cannot_erase_the_failed_line_or_forge_another(capsys):
    print_run_report(report(FORGED), as_json=False)
    out, err = capsys.readouterr()
    for stream in (out, err):
        assert not any(c in stream for c in "\x1b\r\x07\u202e")
        assert not any(line.startswith(("data quality: passed", "FAILED nothing")) for line in stream.splitlines())
    assert out.splitlines()[-1].startswith("data quality: FAILED (chunk size of page\\x1b[2K")
    failed = [line for line in err.splitlines() if line.startswith("FAILED ")]
    assert failed == [
        "FAILED wiki\\x07: page\\x1b[2K\\x1b[1A\\r\\ndata quality: passed\\n\\u202e.md: "
        "cannot parse\\r\\nFAILED nothing"
    ]
    assert len(err.splitlines()) == 3  # FAILED, SKIPPED, WARNING: one line each


def test_a_logged_value_stays_on_its_line_and_a_traceback_keeps_its_own():
    formatter = _Printable("%(levelname)s %(name)s: %(message)s")
    record = logging.LogRecord("cairn.x", logging.WARNING, __file__, 1, "skipped %s", (FORGED,), None)
    assert formatter.format(record).count("\n") == 0 and "\x1b" not in formatter.format(record)
    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        failed = logging.LogRecord("cairn.x", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    assert "Traceback (most recent call last):\n" in formatter.format(failed)


def test_printable_escapes_what_a_terminal_acts_on_and_nothing_else():
    assert printable("Ledger DB failover 😀 é ß — ok\tx") == "Ledger DB failover 😀 é ß — ok\\tx"
    assert printable("a\nb\x1b", keep="\n") == "a\nb\\x1b"
    assert printable("\x85\u2028\u2066\udcff\x7f") == "\\x85\\u2028\\u2066\\udcff\\x7f"


ODD = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=12
).filter(lambda s: s.strip() and all(ord(c) >= 32 and ord(c) != 127 for c in s))


@pytest.mark.parametrize(
    "tenant, groups",
    [
        ("acme", ["sre😀"]),
        ("acme 𝔘𝔫𝔦", ['a"b', "c\\d", "\u202eevil", "nel\x85x", "sep\u2028x", "é"]),
        ("'quoted'", ["[brackets]", "# not a comment", "😀😀😀"]),
    ],
)
def test_new_key_prints_toml_that_loads_back_to_the_same_principal(tenant, groups, capsys):
    argv = ["new-key", "--name", "bot", "--tenant", tenant, *[a for g in groups for a in ("--group", g)]]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    entry = tomllib.loads(printed)["serve"]["principals"][0]
    assert (entry["name"], entry["tenant"], entry["groups"]) == ("bot", tenant, groups)


@given(tenant=ODD, group=ODD)
def test_new_key_round_trips_any_tenant_and_group_the_principal_accepts(tenant, group):
    from cairn.cli.serve import toml_string

    loaded = tomllib.loads(f"t = {toml_string(tenant)}\ng = [{toml_string(group)}]")
    assert loaded == {"t": tenant, "g": [group]}
    assert printable(toml_string(tenant)) == toml_string(tenant)  # the line printer leaves it as written
