"""markdown_units: a Markdown body -> layout-neutral units with exact source text and heading paths."""

from cairn.chunkers.markdown import markdown_units
from cairn.chunkers.tokens import count_tokens
from cairn.chunkers.units import glued_to_next
from cairn.schemas.config import ChunkingConfig

CONFIG = ChunkingConfig()


def test_blocks_become_units_with_their_kind_and_heading_path():
    body = (
        "# Gateway\n\nIntro.\n\n## Diagnosis\n\n- check pods\n- check logs\n\n"
        "### Logs\n\n> Quoted warning.\n\n<div>raw</div>\n\n---\n"
    )
    units = markdown_units(body, CONFIG)
    assert [(u.kind, u.heading_path, u.level) for u in units] == [
        ("heading", ("Gateway",), 1),
        ("paragraph", ("Gateway",), 1),
        ("heading", ("Gateway", "Diagnosis"), 2),
        ("list", ("Gateway", "Diagnosis"), 2),
        ("heading", ("Gateway", "Diagnosis", "Logs"), 3),
        ("quote", ("Gateway", "Diagnosis", "Logs"), 3),
        ("html", ("Gateway", "Diagnosis", "Logs"), 3),
        ("other", ("Gateway", "Diagnosis", "Logs"), 3),
    ]
    assert [u.section_start for u in units] == [u.kind == "heading" for u in units]
    assert all(u.tokens == count_tokens(u.text) for u in units)


def test_a_shallower_heading_closes_deeper_ones():
    units = markdown_units("# A\n\n### Deep\n\ntext\n\n## B\n\nmore", CONFIG)
    assert [u.heading_path for u in units if u.kind == "heading"] == [("A",), ("A", "Deep"), ("A", "B")]


def test_text_before_any_heading_has_an_empty_path_and_level_zero():
    (unit, _, _) = markdown_units("Preface.\n\n# Title\n\nBody.", CONFIG)
    assert (unit.heading_path, unit.level, unit.section_start) == ((), 0, False)


def test_fences_tables_and_lists_keep_their_exact_markdown():
    fence = "```yaml\nreplicas: 6\n\nimage: envoy:1.29\n```"
    table = "| Upstream | Timeout |\n|---|---:|\n| token-service | 800 ms |"
    items = "1. Drain the node.\n2. Restart it:\n\n   ```bash\n   systemctl restart kubelet\n   ```\n3. Uncordon it."
    units = markdown_units(f"## Steps\n\n{fence}\n\n{table}\n\n{items}\n", CONFIG)
    assert [u.text for u in units[1:]] == [fence, table, items]
    assert [u.kind for u in units[1:]] == ["code", "table", "list"]


def test_heading_titles_are_plain_text():
    units = markdown_units("## Restart `auth` with [Argo](https://x) &amp; *care*\n\nText.", CONFIG)
    assert units[0].heading_path == ("Restart auth with Argo & care",)


def test_setext_headings_are_headings():
    units = markdown_units("Gateway\n=======\n\nBody.", CONFIG)
    assert (units[0].kind, units[0].text, units[0].heading_path) == ("heading", "Gateway\n=======", ("Gateway",))


def test_link_reference_definitions_are_kept_not_dropped():
    units = markdown_units("See [the guide][g].\n\n[g]: https://docs.example/guide\n", CONFIG)
    assert [u.text for u in units] == ["See [the guide][g].", "[g]: https://docs.example/guide"]


def test_every_non_blank_line_appears_in_exactly_one_unit():
    body = "# T\n\nOne.\nTwo.\n\n\n- a\n\n- b\n\n> q\n\n    indented code\n\n[r]: http://x\n\n| a |\n|---|\n| 1 |\n"
    unit_lines = [line for u in markdown_units(body, CONFIG) for line in u.text.split("\n") if line.strip()]
    assert unit_lines == [line for line in body.split("\n") if line.strip()]


def test_crlf_and_lone_cr_line_endings_are_normalised():
    lf = markdown_units("# T\n\nA line.\n\n- item\n", CONFIG)
    assert markdown_units("# T\r\n\r\nA line.\r\n\r\n- item\r\n", CONFIG) == lf
    assert markdown_units("# T\r\rA line.\r\r- item\r", CONFIG) == lf


def test_a_blank_body_has_no_units():
    assert markdown_units("", CONFIG) == []
    assert markdown_units("\n \n\t\n", CONFIG) == []


def test_an_oversized_list_is_pre_split_at_top_level_items():
    items = [f"- Item {n}: confirm the replica {n} answers its health probe within the timeout." for n in range(120)]
    units = markdown_units("\n".join(items), CONFIG)
    assert len(units) > 1
    assert all(u.tokens <= CONFIG.parent_max_tokens - CONFIG.parent_min_tokens for u in units)
    assert [line for u in units for line in u.text.split("\n")] == items


def test_an_oversized_blockquote_is_pre_split_between_its_paragraphs():
    paragraphs = [
        f"> Warning {n}: the gateway drops sessions when Redis latency exceeds fifty milliseconds." for n in range(60)
    ]
    units = markdown_units("\n>\n".join(paragraphs), CONFIG)
    assert len(units) > 1 and all(u.kind == "quote" for u in units)
    assert all(u.text.startswith("> Warning") for u in units)


def test_an_unbreakable_sentence_is_cut_at_words():
    blob = " ".join(f"token{n}" for n in range(1500))
    units = markdown_units(blob, CONFIG)
    assert len(units) > 1
    assert " ".join(u.text for u in units) == blob


def test_a_heading_is_glued_to_the_block_it_introduces_but_not_to_a_sibling():
    units = markdown_units("# A\n\n## B\n\n## C\n\ntext", CONFIG)
    assert glued_to_next(units) == [True, False, True, False]


def test_a_fence_inside_an_oversized_list_item_stays_whole():
    commands = "\n".join(f"   kubectl get pods -n team-{n} -o wide --show-labels" for n in range(60))
    fence = f"   ```bash\n{commands}\n   ```"
    units = markdown_units(f"1. Drain the node.\n2. List the pods:\n\n{fence}\n3. Uncordon it.", CONFIG)
    assert fence in [u.text for u in units]
