"""One hostile corpus behind one config with four sources (a wiki folder, a PDF folder, a PagerDuty export,
a git repository), ingested once by `cairn ingest --json` in a subprocess on the session's Prefect server:
no crash, every bad input named in the report with its reason, every good input indexed, every input
accounted for once, and the run's peak RSS bounded against a run over the good inputs alone."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from cairn.cli.app import EXIT_FAILURES
from cairn.index.store import MilvusStore
from cairn.schemas.config import load_config
from tests import pdf_factory
from tests.conftest import REPO, write_config, write_page
from tests.git_repo import Repo

RSS_MARGIN_MB = 300
GOOD_PDF = "acme-globex-master-services-agreement.pdf"
GOOD_INCIDENTS = ("Q1LEDGR", "Q6GLXSC")
PROSE = (
    "Drain the node with kubectl drain, wait for the pods to reschedule, then check the error rate on the "
    "dashboard before moving on to the next node in the pool. "
)

# (source, input) -> a phrase its failure (or its skip: nothing to index in it) must carry; every other input
# must be indexed
EXPECTED_SKIPPED = {("wiki", "empty.md"): "empty file"}
EXPECTED_FAILURES = {
    ("wiki", "image.md"): "binary file",
    ("wiki", "latin1.md"): "not valid UTF-8 (byte 0xe9",
    ("wiki", "huge.md"): "over the source's max_file_bytes",
    ("wiki", "tags-int.md"): "'tags' must be a list of strings",
    ("wiki", "acl-mapping.md"): "'acl' must be a list of strings",
    ("wiki", "bad-date.md"): "'updated' is not an ISO date: 'not a date'",
    ("contracts", "encrypted.pdf"): "encrypted PDF",
    ("contracts", "image-only.pdf"): "no text layer",
    ("contracts", "truncated.pdf"): "corrupt or truncated",
    ("contracts", "corrupt.pdf"): "corrupt or truncated",
    ("contracts", "not-a-pdf.pdf"): "not a PDF",
    ("incidents", "QNOTITLE"): "no 'title' string",
    ("incidents", "QNOSERVICE"): "no 'service' object",
    ("incidents", "QCREATED"): "'created_at' must be an ISO timestamp, got 12",
    ("incidents", "QTEAMS"): "'teams' must be a list, got int",
    ("incidents", "QBADNOTES"): "QBADNOTES/notes.json is not a",
    ("incidents", "QHUGE"): "QHUGE/notes.json",
    ("incidents", "incidents.json[3]"): "incident without a string 'id'",
    ("infra", "notes/binary.md"): "binary file",
    ("infra", "notes/latin1.md"): "not valid UTF-8",
    ("infra", "notes/huge.md"): "over the source's max_file_bytes",
    ("infra", "vendor/lib"): "a git submodule",
}
EXPECTED_INDEXED = {
    ("wiki", "good/restart.md"),
    ("wiki", "good/failover.md"),
    ("wiki", "headings.md"),
    ("wiki", "nested.md"),
    ("contracts", GOOD_PDF),
    ("incidents", "Q1LEDGR"),
    ("incidents", "Q6GLXSC"),
    ("infra", "runbooks/restart.md"),
    ("infra", "terraform/main.tf"),
}


def good_page(title: str) -> str:
    return f"# {title}\n\n## Steps\n\n{PROSE * 6}\n\n## Verify\n\n{PROSE * 4}\n"


def build_wiki(root: Path, hostile: bool) -> None:
    write_page(root, "good/restart.md", good_page("Restart the billing worker"), tags=["billing"])
    write_page(root, "good/failover.md", good_page("Fail over the ledger database"), service="ledger-db")
    if not hostile:
        return
    (root / "empty.md").write_bytes(b"")
    (root / "image.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8)
    (root / "latin1.md").write_bytes("# Caf\xe9 d\xe9ploiement\n\nRed\xe9marrer le service.\n".encode("latin-1"))
    with (root / "huge.md").open("w", encoding="utf-8") as handle:  # 50 MB of real Markdown
        line = "- " + PROSE.strip() + "\n"
        handle.write("# Huge\n\n")
        for _ in range(50 * 1024 * 1024 // len(line) + 1):
            handle.write(line)
    # 10,000 headings, levels 1 to 6, none with a title or text under it (titled ones chunk alike, in
    # tests/unit/test_chunk_document.py; these keep the embedding bill of this test small: ~160 rows)
    (root / "headings.md").write_text("\n".join("#" * (1 + i % 6) for i in range(10_000)) + "\n")
    (root / "nested.md").write_text(
        "# Nested\n\n" + "".join("  " * depth + f"- level {depth} of the plan\n" for depth in range(300))
    )
    (root / "tags-int.md").write_text("---\ntags: 5\n---\n" + good_page("Tags as a number"))
    (root / "acl-mapping.md").write_text("---\nacl: {a: 1}\n---\n" + good_page("ACL as a mapping"))
    (root / "bad-date.md").write_text('---\nupdated: "not a date"\n---\n' + good_page("Date as words"))


def build_pdfs(root: Path, hostile: bool) -> None:
    root.mkdir(parents=True)
    shutil.copy(REPO / "data" / "legal" / GOOD_PDF, root / GOOD_PDF)
    if hostile:
        pdf_factory.write_encrypted(root / "encrypted.pdf")
        pdf_factory.write_image_only(root / "image-only.pdf")
        pdf_factory.write_truncated(root / "truncated.pdf")
        pdf_factory.write_corrupt(root / "corrupt.pdf")
        pdf_factory.write_not_a_pdf(root / "not-a-pdf.pdf")


def build_pagerduty(root: Path, hostile: bool) -> None:
    sample = REPO / "data" / "pagerduty"
    incidents = [
        i for i in json.loads((sample / "incidents.json").read_text())["incidents"] if i["id"] in GOOD_INCIDENTS
    ]
    root.mkdir(parents=True)
    for incident in incidents:
        shutil.copytree(sample / incident["id"], root / incident["id"])
    if hostile:

        def variant(incident_id: str, **fields) -> dict:
            bad = copy.deepcopy(incidents[0])
            bad["id"] = incident_id
            for key, value in fields.items():
                if value is None:
                    bad.pop(key, None)
                else:
                    bad[key] = value
            return bad

        incidents += [
            variant("QNOTITLE", title=None, summary=None),
            variant("QNOSERVICE", service=None),
            variant("QCREATED", created_at=12),
            variant("QTEAMS", teams=5),
            variant("QBADNOTES"),
            variant("QHUGE"),
        ]
        (root / "QBADNOTES").mkdir()
        (root / "QBADNOTES" / "notes.json").write_text('{"notes": [ {"id": ')
        (root / "QHUGE").mkdir()
        note = {"user": {"summary": "Priya Raman"}, "created_at": "2025-11-14T02:25:00Z", "content": PROSE * 40}
        with (root / "QHUGE" / "notes.json").open("w", encoding="utf-8") as handle:  # ~20 MB of notes
            handle.write('{"notes": [')
            count = 20 * 1024 * 1024 // len(json.dumps(note)) + 1
            handle.write(",".join(json.dumps({**note, "id": f"N{n}"}) for n in range(count)))
            handle.write("]}")
        incidents.insert(3, 42)  # not an incident object at all, at position 3 of the page
    (root / "incidents.json").write_text(json.dumps({"incidents": incidents}))


def build_git(root: Path, hostile: bool) -> Path:
    repo = Repo(root)
    repo.write("runbooks/restart.md", good_page("Restart the invoice worker"))
    repo.write("terraform/main.tf", 'resource "aws_sqs_queue" "invoices" {\n  name = "invoices"\n}\n')
    if hostile:
        repo.write("notes/binary.md", b"\x89PNG\x00\x01\x02 not text")
        repo.write("notes/latin1.md", "# Caf\xe9\n".encode("latin-1"))
        repo.write("notes/huge.md", "# Huge\n\n" + PROSE * 2_000)  # ~230 kB, over max_file_bytes below
    head = repo.commit("runbooks", "2025-01-10T09:00:00+00:00")
    if hostile:
        repo.git("update-index", "--add", "--cacheinfo", f"160000,{head},vendor/lib")  # a submodule
        repo.git("commit", "--quiet", "-m", "vendor a library", date="2025-01-11T09:00:00+00:00")
        # a branch pointing to an object the repository does not have: a corrupt ref the source never reads
        (root / ".git" / "refs" / "heads" / "broken").write_text("0123456789abcdef0123456789abcdef01234567\n")
    return root


def build(tmp: Path, name: str, hostile: bool) -> Path:
    data = tmp / name
    build_wiki(data / "wiki", hostile)
    build_pdfs(data / "pdf", hostile)
    build_pagerduty(data / "pagerduty", hostile)
    build_git(data / "repo", hostile)
    return write_config(
        tmp / f"{name}.toml",
        data / "index",
        [
            {"name": "wiki", "type": "wiki", "path": str(data / "wiki"), "tenant": "acme", "acl": ["sre"]},
            {"name": "contracts", "type": "pdf", "path": str(data / "pdf"), "tenant": "acme", "acl": ["legal"]},
            {
                "name": "incidents",
                "type": "pagerduty",
                "path": str(data / "pagerduty"),
                "tenant": "acme",
                "acl": ["sre"],
            },
            {
                "name": "infra",
                "type": "git",
                "repo": str(data / "repo"),
                "tenant": "acme",
                "acl": ["sre"],
                "cache_dir": str(data / "git-cache"),
                "max_file_bytes": 100_000,
                "include": ["**/*.md", "**/*.tf", "vendor/*"],
            },
        ],
    )


@dataclass
class Run:
    code: int
    report: dict
    stderr: str
    peak_rss_mb: float
    seconds: float
    cpu_seconds: float


def ingest(config: Path, timeout: float = 600) -> Run:
    """`cairn ingest --json` in a subprocess on the test Prefect server, with that process's own peak RSS."""
    from prefect.settings import PREFECT_API_URL

    env = {**os.environ, "PYTHONPATH": str(REPO), "PREFECT_API_URL": PREFECT_API_URL.value(), "CAIRN_FAILPOINT": ""}
    out, err = config.with_suffix(".out"), config.with_suffix(".err")
    started = time.monotonic()
    with out.open("wb") as stdout, err.open("wb") as stderr:
        child = subprocess.Popen(
            [sys.executable, "-m", "cairn.cli", "ingest", "--config", str(config), "--json"],
            cwd=REPO,
            env=env,
            stdout=stdout,
            stderr=stderr,
        )
        while True:  # wait4: this child's rusage alone (RUSAGE_CHILDREN would be the maximum over all children)
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - started > timeout:
                child.kill()
                child.wait()
                raise AssertionError(f"cairn ingest of {config.name} still running after {timeout:.0f} s")
            time.sleep(0.2)
        child.returncode = os.waitstatus_to_exitcode(status)
    text = out.read_text()
    return Run(
        child.returncode,
        json.loads(text) if text.strip() else {},
        err.read_text(),
        usage.ru_maxrss / 1024,
        time.monotonic() - started,
        usage.ru_utime + usage.ru_stime,
    )


def indexed(config: Path) -> set[tuple[str, str]]:
    store = MilvusStore(load_config(config).milvus, dim=384)
    store.ensure_collection()
    try:
        return {(r.source_name, r.locator) for r in store.iterate("is_current == true", ["source_name", "locator"])}
    finally:
        store.close()


@pytest.mark.core
def test_a_hostile_corpus_is_ingested_with_every_input_accounted_for_and_memory_bounded(tmp_path, prefect_server):
    baseline_config = build(tmp_path, "baseline", hostile=False)
    hostile_config = build(tmp_path, "hostile", hostile=True)

    baseline = ingest(baseline_config)
    assert baseline.code == 0 and not baseline.report["failures"], (baseline.code, baseline.stderr[-3000:])
    assert baseline.report["documents"]["indexed"] == len(EXPECTED_INDEXED) - 2  # all but headings.md, nested.md

    hostile = ingest(hostile_config)
    assert hostile.code in (0, EXIT_FAILURES), hostile.stderr[-3000:]  # 0 without --strict; never a crash
    assert "Traceback" not in hostile.stderr, hostile.stderr[-3000:]
    report = hostile.report
    failures = {(f["source"], f["document"]): f["error"] for f in report["failures"]}
    assert set(failures) == set(EXPECTED_FAILURES), sorted(set(failures) ^ set(EXPECTED_FAILURES))
    for key, phrase in EXPECTED_FAILURES.items():
        assert phrase in failures[key], (key, failures[key])
    assert indexed(hostile_config) == EXPECTED_INDEXED
    skipped = {(s["source"], s["document"]): s["reason"] for s in report["skipped"]}
    assert set(skipped) == set(EXPECTED_SKIPPED) and all(p in skipped[k] for k, p in EXPECTED_SKIPPED.items())

    d = report["documents"]
    assert d["seen"] == len(EXPECTED_FAILURES) + len(EXPECTED_SKIPPED) + len(EXPECTED_INDEXED) == 32
    assert d["seen"] == d["indexed"] + d["unchanged"] + d["skipped"] + d["failed"]
    assert (d["indexed"], d["failed"], d["skipped"], d["unchanged"], d["deleted"]) == (
        len(EXPECTED_INDEXED),
        len(EXPECTED_FAILURES),
        len(EXPECTED_SKIPPED),
        0,
        0,
    )

    ratio = hostile.peak_rss_mb / baseline.peak_rss_mb
    print(
        f"\npeak RSS: good inputs {baseline.peak_rss_mb:.0f} MB "
        f"({baseline.seconds:.1f} s, {baseline.cpu_seconds:.1f} s CPU); "
        f"hostile corpus {hostile.peak_rss_mb:.0f} MB ({hostile.seconds:.1f} s, {hostile.cpu_seconds:.1f} s CPU); "
        f"ratio {ratio:.2f}"
    )
    assert hostile.peak_rss_mb < baseline.peak_rss_mb + RSS_MARGIN_MB, ratio
