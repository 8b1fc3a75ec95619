"""split_children: a section's units -> ~150-token child chunks cut at natural boundaries."""

from cairn.chunkers.children import split_children
from cairn.chunkers.markdown import markdown_units
from cairn.chunkers.tokens import count_tokens
from cairn.schemas.config import ChunkingConfig

CONFIG = ChunkingConfig()
_SUBJECTS = ["queue", "replica", "gateway", "certificate", "volume", "scheduler", "ingress", "snapshot"]


def prose(tokens: int, topic: str = "service") -> str:
    sentences, total, i = [], 0, 0
    while total < tokens:
        sentence = f"Check that the {topic} {_SUBJECTS[i % len(_SUBJECTS)]} number {i} is healthy before step {i + 1}."
        sentences.append(sentence)
        total += count_tokens(sentence) + 1
        i += 1
    return " ".join(sentences)


def children_of(markdown: str, config: ChunkingConfig = CONFIG):
    return split_children(markdown_units(markdown, config), config)


def squeeze(text: str) -> str:
    return "".join(text.split())


def test_a_section_within_one_child_is_a_single_child_equal_to_it():
    text = "## Restart\n\nRun the rollout restart.\n\n```bash\nkubectl rollout restart deploy/auth-gateway\n```"
    (child,) = children_of(text)
    assert (child.order, child.text, child.token_count) == (0, text, count_tokens(text))


def test_children_of_long_prose_are_within_the_child_band():
    children = children_of("\n\n".join(prose(120, f"part {n}") for n in range(6)) + "\n\n" + prose(400))
    assert len(children) >= 5
    assert all(CONFIG.child_min_tokens <= c.token_count <= CONFIG.child_max_tokens for c in children[:-1])
    assert children[-1].token_count <= CONFIG.child_max_tokens


def test_children_are_ordered_and_count_their_tokens():
    children = children_of(prose(900))
    assert [c.order for c in children] == list(range(len(children)))
    assert all(c.token_count == count_tokens(c.text) for c in children)


def test_children_concatenated_cover_the_section():
    text = (
        f"## Diagnosis\n\n{prose(300)}\n\n- {prose(80, 'item')}\n- {prose(90, 'other item')}\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |"
    )
    units = markdown_units(text, CONFIG)
    children = split_children(units, CONFIG)
    assert squeeze("".join(c.text for c in children)) == squeeze("\n\n".join(u.text for u in units))


def test_a_long_paragraph_is_cut_between_sentences():
    for child in children_of(prose(700)):
        assert child.text.startswith("Check") and child.text.endswith(".")


def test_a_code_fence_that_fits_in_a_child_is_never_cut():
    fence = "```bash\n" + "\n".join(f"kubectl -n identity delete pod auth-gateway-{n}" for n in range(12)) + "\n```"
    assert 100 < count_tokens(fence) <= CONFIG.child_max_tokens
    children = children_of(f"{prose(130)}\n\n{fence}\n\n{prose(130)}")
    assert sum("```bash" in c.text for c in children) == 1
    assert any(fence in c.text for c in children)


def test_a_code_fence_larger_than_a_child_is_cut_into_valid_fences():
    lines = [f"kubectl -n identity logs pod/auth-gateway-{n} --since=1h" for n in range(40)]
    children = children_of("```bash\n" + "\n".join(lines) + "\n```")
    assert len(children) >= 2
    assert all(c.text.startswith("```bash\n") and c.text.endswith("\n```") for c in children)
    assert [line for c in children for line in c.text.split("\n")[1:-1]] == lines


def test_a_fence_inside_a_list_item_stays_with_its_item():
    item = "3. Restart the gateway:\n\n   ```bash\n   kubectl -n identity rollout restart deploy/auth-gateway\n   ```"
    listing = "\n".join(f"{n}. {prose(60, f'step {n}')}" for n in (1, 2)) + "\n" + item + "\n4. " + prose(60, "step 4")
    children = children_of(listing)
    holding = [c for c in children if "rollout restart" in c.text]
    assert len(holding) == 1 and "```bash" in holding[0].text and holding[0].text.rstrip().count("```") == 2


def test_a_heading_stays_attached_to_the_text_it_introduces():
    text = f"## Diagnosis\n\n{prose(170)}\n\n### Logs\n\n{prose(170)}\n\n### Metrics\n\n{prose(170)}"
    children = children_of(text)
    assert all(not c.text.rstrip().split("\n")[-1].startswith("#") for c in children)
    assert [c.text.split("\n")[0] for c in children if c.text.startswith("#")] == [
        "## Diagnosis",
        "### Logs",
        "### Metrics",
    ]


def test_a_sentence_longer_than_a_child_is_cut_at_words():
    words = " ".join(f"endpoint{n}" for n in range(400))
    children = children_of(words)
    assert len(children) >= 2
    assert all(c.token_count <= CONFIG.child_max_tokens for c in children)
    assert " ".join(c.text for c in children) == words


def test_an_empty_section_has_no_children():
    assert split_children([], CONFIG) == []
