"""Deep links that click through (#53): headings' anchors as GitHub, GitLab and Hugo render them, recorded per
section at chunking; a wiki source's link_template and a page's front matter `url`; the deep link built from
them (the section id stays Cairn's identity)."""

from __future__ import annotations

import pytest

from cairn.chunkers import chunk_document
from cairn.query.citations import deep_link
from cairn.schemas.anchors import Anchors, heading_anchor, styled
from cairn.schemas.config import ChunkingConfig, WikiSourceConfig
from cairn.schemas.records import ContentType, SourceDocument, SourceType
from cairn.schemas.rows import ChunkRow
from cairn.sources.wiki import WikiSource
from tests.conftest import write_page


# Headings of the runbooks in ../shared/corpora, with the anchor GitHub gives each (github-slugger's rules).
@pytest.mark.parametrize(
    "heading, anchor",
    [
        ("Meaning", "meaning"),  # prometheus-operator runbooks
        ("KubePodCrashLooping", "kubepodcrashlooping"),
        ("Incident Commander / IC", "incident-commander--ic"),  # PagerDuty docs: runs of hyphens kept
        ("Incident Commander (IC)", "incident-commander-ic"),
        (
            "There's no incident commander on the call! I don't know what to do!",
            "theres-no-incident-commander-on-the-call-i-dont-know-what-to-do",
        ),
        (
            '"Production service is failing for 75% of requests, automation is unable to resolve."_',
            "production-service-is-failing-for-75-of-requests-automation-is-unable-to-resolve_",
        ),
        ("Make the title/summary descriptive and concise.", "make-the-titlesummary-descriptive-and-concise"),
        ("The `etcd` [backup](https://etcd.io/docs) <b>step</b>", "the-etcd-backup-step"),
        ("Setup {#install}", "install"),  # Hugo's heading attribute names it
    ],
)
def test_a_headings_anchor_is_the_one_github_renders(heading, anchor):
    assert heading_anchor(heading) == anchor


def test_a_repeated_heading_is_numbered_as_the_renderers_number_it():
    page = Anchors()
    claimed = [page.claim(h) for h in ("What is it?", "Why have one?", "What is it?", "What is it?", "What is it 1")]
    assert claimed == ["what-is-it", "why-have-one", "what-is-it-1", "what-is-it-2", "what-is-it-1-1"]
    assert styled("incident-commander--ic", "gitlab") == "incident-commander-ic"
    assert styled("incident-commander--ic", "hugo") == "incident-commander--ic"  # Hugo's default is GitHub's


PAGE = """# Ledger failover

Read it all.

## Unplanned failover

Patroni decides.

## Planned switchover

Drain first.

## Unplanned failover

The second one.
"""


def test_each_section_records_the_anchor_of_the_heading_it_starts_under():
    doc = SourceDocument(
        document_id="d",
        source_name="wiki",
        source_type=SourceType.WIKI,
        source_uri="file:///w/ledger.md",
        locator="ledger.md",
        title="Ledger failover",
        content=PAGE,
        tenant_id="acme",
        access_control_list=["sre"],
        content_type=ContentType.RUNBOOK,
        version_hash="v1",
        created_at=0,
        updated_at=0,
        temporal_start=0,
    )
    sections = chunk_document(doc, ChunkingConfig(parent_min_tokens=1, parent_target_tokens=8, parent_max_tokens=40))
    anchors = [s.extra.get("anchor") for s in sections]
    assert anchors[-1] == "unplanned-failover-1" and "planned-switchover" in anchors
    assert [s.section_id for s in sections][-1] != "unplanned-failover-1"  # the id stays Cairn's


def row(**extra):
    return ChunkRow(source_uri="file:///w/ledger.md", section_id="ledger-failover.unplanned-failover-2", extra=extra)


def test_the_deep_link_is_the_published_page_at_the_rendered_anchor():
    github = "https://github.com/acme/runbooks/blob/main/ledger.md#{anchor}"
    assert deep_link(row(anchor="unplanned-failover-1", link=github)) == github.replace(
        "{anchor}", "unplanned-failover-1"
    )
    wiki = "https://gitlab.example/acme/wiki/-/blob/main/ledger.md"  # no {anchor}: appended after '#'
    assert deep_link(row(anchor="a--b", link=wiki, anchor_style="gitlab")) == wiki + "#a-b"
    assert deep_link(row(anchor="", link=github)) == github.replace("#{anchor}", "")  # the page's top
    assert deep_link(row(anchor="unplanned-failover")) == "file:///w/ledger.md#unplanned-failover"
    # a row written before anchors were recorded: Cairn's section id, as before
    assert deep_link(row()) == "file:///w/ledger.md#ledger-failover.unplanned-failover-2"


def wiki(root, **settings):
    return WikiSource(
        WikiSourceConfig(name="wiki", type="wiki", path=str(root), tenant="acme", acl=["sre"], **settings)
    )


def test_a_wiki_source_publishes_its_pages_by_its_link_template_and_front_matter_overrides_it(tmp_path):
    write_page(tmp_path, "ops/ledger db.md", "# Ledger\n\nSteps.\n")
    write_page(tmp_path, "ops/own.md", "# Own\n\nSteps.\n", url="https://docs.acme.example/own/")
    write_page(tmp_path, "ops/bad.md", "# Bad\n\nSteps.\n", url="javascript:alert(1)")
    template = "https://github.com/acme/runbooks/blob/main/{path}#{anchor}"
    source = wiki(tmp_path, link_template=template, anchor_style="gitlab")
    docs = {ref.locator: source.load(ref) for ref in source.discover()}
    assert docs["ops/ledger db.md"].extra == {
        "link": "https://github.com/acme/runbooks/blob/main/ops/ledger%20db.md#{anchor}",
        "anchor_style": "gitlab",
    }
    assert docs["ops/own.md"].extra["link"] == "https://docs.acme.example/own/"
    assert docs["ops/bad.md"].extra["link"].startswith("https://github.com/")  # not a web address: not taken
    assert wiki(tmp_path).load(next(iter(wiki(tmp_path).discover()))).extra == {}


@pytest.mark.parametrize("template", ["https://x/{page}", "https://x/#{anchor}", "https://x/{path}/{anchor}{who}"])
def test_a_link_template_takes_path_and_anchor_only(tmp_path, template):
    with pytest.raises(ValueError, match="link_template takes"):
        wiki(tmp_path, link_template=template)
