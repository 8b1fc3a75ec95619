"""pack_sections: heading-aware segmentation into 400-900-token parent sections, ids and quality flags."""

from cairn.chunkers.markdown import markdown_units
from cairn.chunkers.sections import pack_sections, slug
from cairn.chunkers.tokens import count_tokens
from cairn.schemas.config import ChunkingConfig

CONFIG = ChunkingConfig()
_SUBJECTS = ["queue", "replica", "gateway", "certificate", "volume", "scheduler", "ingress", "snapshot"]


def prose(tokens: int, topic: str = "service") -> str:
    """Deterministic runbook-like sentences adding up to about `tokens` tokens, as one paragraph."""
    sentences, total, i = [], 0, 0
    while total < tokens:
        sentence = f"Check that the {topic} {_SUBJECTS[i % len(_SUBJECTS)]} number {i} is healthy before step {i + 1}."
        sentences.append(sentence)
        total += count_tokens(sentence) + 1
        i += 1
    return " ".join(sentences)


def paragraphs(tokens: int, topic: str = "service", size: int = 100) -> str:
    return "\n\n".join(prose(size, f"{topic} {n}") for n in range(max(1, tokens // size)))


def sections_of(markdown: str, title: str = "Doc", config: ChunkingConfig = CONFIG):
    return pack_sections(markdown_units(markdown, config), title, config)


def test_headings_become_breadcrumbs_and_slug_path_ids():
    doc = f"# Restart auth-gateway\n\n## Diagnosis\n\n{prose(500)}\n\n## Mitigation\n\n{prose(500)}"
    sections = sections_of(doc)
    assert [s.section_id for s in sections] == ["restart-auth-gateway", "restart-auth-gateway.mitigation"]
    assert [s.breadcrumbs for s in sections] == [["Restart auth-gateway"], ["Restart auth-gateway", "Mitigation"]]


def test_heading_markup_is_reduced_to_plain_words():
    doc = f"## Restart `auth-gateway` via [Argo CD](https://argo.example) **now**\n\n{prose(450)}"
    (section,) = sections_of(doc)
    assert section.breadcrumbs == ["Restart auth-gateway via Argo CD now"]
    assert section.section_id == "restart-auth-gateway-via-argo-cd-now"


def test_nested_h1_to_h4_sections_record_levels_and_parent_sections():
    doc = "\n\n".join(
        [
            f"# Gateway\n\n{prose(450)}",
            f"## Diagnosis\n\n{prose(450)}",
            f"### Logs\n\n{prose(450)}",
            f"#### Step 2\n\n{prose(450)}",
            f"## Mitigation\n\n{prose(450)}",
        ]
    )
    sections = sections_of(doc)
    assert [s.section_id for s in sections] == [
        "gateway",
        "gateway.diagnosis",
        "gateway.diagnosis.logs",
        "gateway.diagnosis.logs.step-2",
        "gateway.mitigation",
    ]
    assert [s.section_level for s in sections] == [1, 2, 3, 4, 2]
    assert [s.parent_section_id for s in sections] == [
        "",
        "gateway",
        "gateway.diagnosis",
        "gateway.diagnosis.logs",
        "gateway",
    ]


def test_parent_section_is_the_section_holding_the_parent_heading_when_merged():
    doc = f"# Gateway\n\n## Meaning\n\n{prose(200)}\n\n## Impact\n\n{prose(300)}\n\n## Diagnosis\n\n{prose(500)}"
    sections = sections_of(doc)
    assert [s.section_id for s in sections] == ["gateway", "gateway.diagnosis"]
    assert sections[1].parent_section_id == "gateway"


def test_duplicate_sibling_headings_get_numbered_ids():
    doc = "# Runbook\n\n" + "\n\n".join(f"## Step\n\n{prose(450, f'step {n}')}" for n in range(3))
    assert [s.section_id for s in sections_of(doc)] == ["runbook", "runbook.step-2", "runbook.step-3"]


def test_small_sibling_sections_are_merged_into_one_section():
    doc = "# Runbook\n\n" + "\n\n".join(f"## Part {n}\n\n{prose(100, f'part {n}')}" for n in range(5))
    (section,) = sections_of(doc)
    assert section.quality_flags.merge_count == 5  # the H1 and five H2 sections in one
    assert section.section_id == "runbook" and section.breadcrumbs == ["Runbook"]
    assert 400 <= section.token_count <= 900


def test_sibling_sections_already_in_band_are_kept_apart():
    doc = f"## Diagnosis\n\n{prose(440)}\n\n## Mitigation\n\n{prose(440)}"
    sections = sections_of(doc)
    assert [s.section_id for s in sections] == ["diagnosis", "mitigation"]
    assert all(s.quality_flags.merge_count == 0 for s in sections)


def test_a_long_section_is_split_into_parts_within_the_maximum():
    doc = f"## Failover\n\n{paragraphs(2000, 'failover')}"
    sections = sections_of(doc)
    assert count_tokens(doc) >= 1900
    assert len(sections) >= 3
    assert all(s.token_count <= CONFIG.parent_max_tokens for s in sections)
    assert [s.section_id for s in sections] == ["failover"] + [
        f"failover.part-{n}" for n in range(2, len(sections) + 1)
    ]
    assert all(s.quality_flags.split_count == len(sections) for s in sections)
    assert all(s.parent_section_id == "failover" for s in sections[1:])
    assert all(s.breadcrumbs == ["Failover"] for s in sections)


def test_a_long_paragraph_is_split_at_sentence_boundaries():
    sections = sections_of(f"## Notes\n\n{prose(2000)}")
    assert len(sections) >= 3
    assert all(s.token_count <= CONFIG.parent_max_tokens for s in sections)
    assert all(s.text.endswith(".") for s in sections)
    assert all(s.text.split("\n")[-1].lstrip().startswith(("Check", "#")) for s in sections)


def test_a_long_list_is_split_between_items():
    items = "\n".join(f"- {prose(30, f'item {n}')}" for n in range(80))
    sections = sections_of(f"## Checklist\n\n{items}")
    assert len(sections) >= 2
    assert all(s.token_count <= CONFIG.parent_max_tokens for s in sections)
    assert all(line.startswith(("- ", "## ")) for s in sections for line in s.text.split("\n") if line)


def test_a_code_fence_below_the_hard_limit_is_never_split_across_sections():
    fence = (
        "```bash\n"
        + "\n".join(f"kubectl -n identity logs pod/auth-gateway-{n} --since=1h | grep 503" for n in range(80))
        + "\n```"
    )
    assert CONFIG.parent_max_tokens < count_tokens(fence) < CONFIG.hard_block_tokens
    doc = f"## Logs\n\n{prose(300)}\n\n{fence}\n\n{prose(300)}"
    holding = [s for s in sections_of(doc) if "```bash" in s.text]
    assert len(holding) == 1 and fence in holding[0].text


def test_a_code_fence_above_the_hard_limit_is_cut_into_valid_fences():
    config = ChunkingConfig(hard_block_tokens=1000)
    lines = [f"kubectl -n identity rollout restart deploy/auth-gateway-{n} --timeout=10m" for n in range(150)]
    doc = "## Restart\n\n```bash\n" + "\n".join(lines) + "\n```"
    sections = sections_of(doc, config=config)
    fences = [block for s in sections for block in s.text.split("\n\n") if block.startswith("```")]
    assert len(fences) >= 2
    assert all(block.startswith("```bash\n") and block.endswith("\n```") for block in fences)
    assert [line for block in fences for line in block.split("\n")[1:-1]] == lines


def test_a_table_is_never_split_across_sections():
    rows = "\n".join(f"| auth-gateway-{n} | identity | 512 MiB | 6 replicas |" for n in range(70))
    table = f"| Pod | Namespace | Memory | Replicas |\n|---|---|---|---|\n{rows}"
    assert count_tokens(table) > CONFIG.parent_max_tokens
    doc = f"## Capacity\n\n{prose(300)}\n\n{table}\n\n{prose(300)}"
    holding = [s for s in sections_of(doc) if "| Pod |" in s.text]
    assert len(holding) == 1 and table in holding[0].text


def test_a_table_above_the_hard_limit_repeats_its_header_in_every_piece():
    config = ChunkingConfig(hard_block_tokens=1000)
    rows = [f"| auth-gateway-{n} | identity | 512 MiB | 6 replicas |" for n in range(200)]
    header = "| Pod | Namespace | Memory | Replicas |\n|---|---|---|---|"
    sections = sections_of("## Capacity\n\n" + header + "\n" + "\n".join(rows), config=config)
    tables = [block for s in sections for block in s.text.split("\n\n") if block.startswith("|")]
    assert len(tables) >= 2
    assert all(block.startswith(header + "\n") for block in tables)
    assert [row for block in tables for row in block.split("\n")[2:]] == rows


def test_a_heading_never_ends_a_section():
    doc = "\n\n".join(f"## Step {n}\n\n{prose(170 + 40 * (n % 4), f'step {n}')}" for n in range(30))
    for section in sections_of(doc):
        assert not section.text.split("\n\n")[-1].startswith("#")


def test_text_before_the_first_heading_is_the_root_section():
    sections = sections_of(f"{prose(450)}\n\n# Gateway\n\n{prose(450)}", title="Gateway runbook")
    assert [s.section_id for s in sections] == ["root", "gateway"]
    assert sections[0].breadcrumbs == ["Gateway runbook"] and sections[0].section_level == 0


def test_a_document_without_headings_is_titled_by_the_document():
    (section,) = sections_of(prose(500), title="Gateway runbook")
    assert (section.section_id, section.breadcrumbs, section.section_level) == ("root", ["Gateway runbook"], 0)
    assert (section.parent_section_id, section.quality_flags.merge_count, section.quality_flags.split_count) == (
        "",
        0,
        0,
    )


def test_a_small_document_is_one_section_even_below_the_minimum():
    (section,) = sections_of("# Tiny\n\nRestart the pod.\n\n## More\n\nThen check the logs.")
    assert section.token_count < CONFIG.parent_min_tokens
    assert section.text == "# Tiny\n\nRestart the pod.\n\n## More\n\nThen check the logs."


def test_section_ids_stay_unique_when_a_heading_reads_like_a_part():
    doc = f"## Long\n\n{paragraphs(1500, 'long')}\n\n### Part 2\n\n{prose(450)}"
    ids = [s.section_id for s in sections_of(doc)]
    assert "long.part-2" in ids and len(set(ids)) == len(ids)


def test_slugs_are_lowercase_ascii_with_hyphens():
    assert slug("Restart `auth-gateway` (EU-West)!") == "restart-auth-gateway-eu-west"
    assert slug("Déploiement à chaud") == "deploiement-a-chaud"
    assert slug("再起動") == "section"
