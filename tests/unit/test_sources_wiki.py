import pytest

from cairn.errors import DocumentRefused, NothingToIndex
from cairn.schemas import TEMPORAL_OPEN, ContentType, Environment, Severity
from cairn.schemas.config import WikiSourceConfig
from cairn.sources import DiscoveryFailure, DocumentError, SourceError
from cairn.sources.wiki import WikiSource
from tests.conftest import write_page


def source(root, **extra):
    return WikiSource(WikiSourceConfig(name="wiki", type="wiki", path=str(root), tenant="acme", acl=["sre"], **extra))


def load_all(src):
    out = {}
    for ref in src.discover():
        assert not isinstance(ref, DiscoveryFailure)
        try:
            out[ref.locator] = src.load(ref)
        except DocumentError as exc:
            out[ref.locator] = exc
    return out


def test_front_matter_overrides_source_defaults(tmp_path):
    write_page(
        tmp_path,
        "ops/db.md",
        "# Ledger DB failover\n\nSteps.\n",
        tenant="acme",
        acl=["sre"],
        service="ledger-db",
        environment="production",
        severity="sev2",
        tags=["postgres"],
        content_type="runbook",
        doc_tag="ledger",
        updated="2026-03-14",
    )
    doc = load_all(source(tmp_path))["ops/db.md"]
    assert (doc.tenant_id, doc.access_control_list, doc.service_name) == ("acme", ["sre"], "ledger-db")
    assert (doc.environment, doc.severity, doc.content_type) == (
        Environment.PRODUCTION,
        Severity.SEV2,
        ContentType.RUNBOOK,
    )
    assert doc.title == "Ledger DB failover" and doc.doc_tag == "ledger" and doc.tags == ["postgres"]
    assert doc.updated_at == 1773446400 and doc.temporal_start == doc.updated_at and doc.temporal_end == TEMPORAL_OPEN
    assert doc.content.startswith("# Ledger DB failover")


def test_defaults_apply_without_front_matter(tmp_path):
    write_page(tmp_path, "a.md", "Plain text, no heading.\n")
    doc = load_all(source(tmp_path))["a.md"]
    assert (doc.tenant_id, doc.access_control_list, doc.title) == ("acme", ["sre"], "a")


def test_document_id_is_stable_and_version_ignores_line_endings(tmp_path):
    (tmp_path / "a.md").write_bytes(b"# T\n\nbody\n")
    first = next(source(tmp_path).discover())
    (tmp_path / "a.md").write_bytes(b"\xef\xbb\xbf# T\r\n\r\nbody\r\n")
    second = next(source(tmp_path).discover())
    assert first.document_id == second.document_id and first.version_hash == second.version_hash
    (tmp_path / "a.md").write_bytes(b"# T\n\nbody changed\n")
    assert next(source(tmp_path).discover()).version_hash != first.version_hash


@pytest.mark.parametrize(
    "content, reason",
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00", "binary file"),
        (b"# caf\xe9\n", "not valid UTF-8 (byte 0xe9 at offset 5)"),
        (b"---\ntitle: [unclosed\n---\n# x\n", "front matter is not valid YAML"),
        (b"---\ntitle: x\n# never closed\n", "never closed"),
        (b"---\nacl: {a: 1}\n---\n# x\n", "'acl' must be a list of strings"),
        (b"---\nenvironment: moon\n---\n# x\n", "'moon' is not a valid Environment"),
        (b"---\nupdated: yesterday\n---\n# x\n", "not an ISO date"),
    ],
)
def test_bad_input_is_a_document_error_with_a_reason(tmp_path, content, reason):
    (tmp_path / "bad.md").write_bytes(content)
    (tmp_path / "good.md").write_text("# Good\n\ntext\n")
    loaded = load_all(source(tmp_path))
    assert isinstance(loaded["bad.md"], DocumentError) and reason in loaded["bad.md"].reason
    assert not isinstance(loaded["bad.md"], NothingToIndex)
    assert not isinstance(loaded["good.md"], DocumentError)


@pytest.mark.parametrize(
    "content, reason",
    [
        (b"", "empty file"),
        (b" \n\t\n", "empty file"),
        (b"---\ntitle: Runbooks\nbookHidden: true\n---\n\n", "front matter only"),  # a Hugo section's _index.md
        (
            b'---\ntitle: "{{ replace .Name "-" " " | title }}"\ndate: {{ .Date }}\n---\n',
            "front matter only",
        ),  # archetype
    ],
)
def test_a_page_with_nothing_to_index_is_set_apart_with_the_reason(tmp_path, content, reason):
    (tmp_path / "_index.md").write_bytes(content)
    loaded = load_all(source(tmp_path))
    assert isinstance(loaded["_index.md"], NothingToIndex) and reason in loaded["_index.md"].reason


def test_no_acl_anywhere_is_refused_default_deny(tmp_path):
    write_page(tmp_path, "a.md", "# T\n\ntext\n")
    src = WikiSource(WikiSourceConfig(name="wiki", type="wiki", path=str(tmp_path), tenant="acme"))
    assert "no access control list" in load_all(src)["a.md"].reason


def test_missing_folder_is_a_source_error(tmp_path):
    with pytest.raises(SourceError, match="does not exist"):
        list(source(tmp_path / "missing").discover())


def test_only_markdown_files_are_discovered(tmp_path):
    write_page(tmp_path, "a.md", "# A\n")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    (tmp_path / "notes.txt").write_text("x")
    assert [r.locator for r in source(tmp_path).discover()] == ["a.md"]


def test_oversized_page_is_refused_at_discovery_without_being_read(tmp_path):
    big = tmp_path / "huge.md"
    with big.open("wb") as handle:  # 50 MB of Markdown, sparse on disk
        handle.write(b"# Huge\n\n")
        handle.truncate(50 * 1024 * 1024)
    write_page(tmp_path, "ok.md", "# Fine\n\ntext\n")
    found = list(source(tmp_path).discover())
    failures = [f for f in found if isinstance(f, DiscoveryFailure)]
    assert [f.locator for f in failures] == ["huge.md"] and "max_file_bytes" in failures[0].reason
    assert [r.locator for r in found if not isinstance(r, DiscoveryFailure)] == ["ok.md"]
    assert not any(isinstance(f, DiscoveryFailure) for f in source(tmp_path, max_file_bytes=60_000_000).discover())


def _loaded(src) -> dict:
    """The documents that load (failures left aside)."""
    out = {}
    for ref in src.discover():
        if not isinstance(ref, DiscoveryFailure):
            try:
                out[ref.locator] = src.load(ref)
            except DocumentError:
                pass
    return out


def _failures(src) -> dict[str, str]:
    out = {}
    for ref in src.discover():
        if isinstance(ref, DiscoveryFailure):
            out[ref.locator] = ref.reason
            continue
        try:
            src.load(ref)
        except DocumentError as exc:
            out[ref.locator] = exc.reason
    return out


def test_front_matter_may_narrow_the_acl_but_never_widen_it_empty_it_or_change_the_tenant(tmp_path):
    wide = WikiSource(WikiSourceConfig(name="wiki", type="wiki", path=str(tmp_path), tenant="acme", acl=["sre", "dba"]))
    write_page(tmp_path, "narrow.md", "# N\n\nbody\n", acl=["dba"])
    write_page(tmp_path, "widen.md", "# W\n\nbody\n", acl=["dba", "everyone"])
    write_page(tmp_path, "empty.md", "# E\n\nbody\n", acl=[])
    write_page(tmp_path, "move.md", "# M\n\nbody\n", tenant="globex")
    failures = _failures(wide)
    assert set(failures) == {"widen.md", "empty.md", "move.md"}
    assert "everyone" in failures["widen.md"] and "never widen" in failures["widen.md"]
    assert "nobody could read" in failures["empty.md"]
    assert all(isinstance(load_all(wide)[name], DocumentRefused) for name in failures)  # refused by policy
    assert "'globex' is not the source's tenant 'acme'" in failures["move.md"]
    assert _loaded(wide)["narrow.md"].access_control_list == ["dba"]


def test_symbolic_links_out_of_the_folder_are_reported_and_never_read(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nthe host's private notes\n")
    root = tmp_path / "wiki"
    write_page(root, "ok.md", "# Ok\n\nbody\n")
    (root / "leak.md").symlink_to(outside / "secret.md")
    (root / "dir").symlink_to(outside, target_is_directory=True)
    write_page(root, "sub/inner.md", "# Inner\n\nbody\n")
    (root / "alias.md").symlink_to(root / "sub" / "inner.md")  # inside the root: followed
    src = source(root)
    failures = _failures(src)
    assert set(failures) == {"leak.md"} and "outside the source's folder" in failures["leak.md"]
    docs = _loaded(src)
    assert "the host's private notes" not in " ".join(d.content for d in docs.values())
    assert {"ok.md", "alias.md", "sub/inner.md"} <= set(docs) and not any(k.startswith("dir/") for k in docs)


def test_a_file_name_that_is_not_utf8_is_reported_not_a_crash(tmp_path):
    import os

    write_page(tmp_path, "ok.md", "# Ok\n\nbody\n")
    with open(os.path.join(os.fsencode(tmp_path), b"caf\xe9.md"), "wb") as handle:
        handle.write(b"# Cafe\n\nbody\n")
    failures = _failures(source(tmp_path))
    assert failures == {"caf\\xe9.md": "the file name is not valid UTF-8: rename it"}


def test_a_source_checks_its_listing_budget_where_it_is_told(tmp_path):
    import time

    from cairn.errors import SourceError
    from cairn.schemas.source_config import WikiSourceConfig
    from cairn.sources.wiki import WikiSource

    config = WikiSourceConfig(name="w", type="wiki", path=str(tmp_path), tenant="acme", acl=["sre"])
    source = WikiSource(config)
    source.check_budget("listing (0 documents listed)")  # an hour by default: nothing to say
    source.deadline = time.monotonic() - 1  # as it stands an hour later
    with pytest.raises(
        SourceError, match=r"past its listing budget \(3600 s, listing_budget_seconds\) while listing \(9"
    ):
        source.check_budget("listing (9,999 documents listed)")
