"""bench.scale's synthetic wiki is a pure function of (seed, pages): the same corpus on every run, short
realistic pages in nested folders; its change plan and edits touch what they say; its table shows what ran."""

import re

import pytest

from bench.scale_corpus import KINDS, TEAMS, changes, edited, page, pages, questions, write_corpus
from bench.scale_table import table


def headings(text: str) -> list[str]:
    return re.findall(r"^## (.+)$", text, flags=re.MULTILINE)


def test_the_same_seed_and_size_give_the_same_corpus_and_another_seed_another():
    assert list(pages(7, 40)) == list(pages(7, 40))
    assert [p.text for p in pages(7, 40)] != [p.text for p in pages(8, 40)]


def test_a_corpus_has_exactly_the_pages_asked_for_each_at_its_own_path():
    corpus = list(pages(35, 300))
    assert len(corpus) == 300
    assert len({p.path for p in corpus}) == 300


def test_a_smaller_corpus_is_the_beginning_of_a_larger_one():
    assert list(pages(35, 50)) == list(pages(35, 120))[:50]


def test_pages_sit_in_team_service_kind_folders():
    for p in pages(35, 200):
        team, service, kind, name = p.path.split("/")
        assert team in TEAMS and service.startswith(f"{team}-") and kind in KINDS and name.endswith(".md")
    assert len({p.path.rsplit("/", 1)[0] for p in pages(35, 200)}) > 50  # spread over many folders


def test_every_page_has_front_matter_a_title_and_two_or_three_sections():
    for p in pages(35, 200):
        assert p.text.startswith("---\ntitle: ")
        assert re.search(r"^# .+$", p.text, flags=re.MULTILINE)
        assert 2 <= len(headings(p.text)) <= 3


def test_pages_are_short_and_their_vocabulary_varied():
    corpus = list(pages(35, 200))
    words = [len(p.text.split()) for p in corpus]
    assert 100 <= min(words) and max(words) <= 600
    vocabulary = {w for p in corpus for w in re.findall(r"[a-z0-9_-]+", p.text.lower())}
    assert len(vocabulary) > 500
    assert len({p.text.split("\n## ")[1] for p in corpus}) == len(corpus)  # no two first sections alike


def test_write_corpus_writes_every_page_under_its_folders(tmp_path):
    written = write_corpus(tmp_path, 35, 25)
    files = sorted(f.relative_to(tmp_path).as_posix() for f in tmp_path.rglob("*.md"))
    assert files == sorted(p.path for p in pages(35, 25))
    assert written == sum(f.stat().st_size for f in tmp_path.rglob("*.md"))


@pytest.mark.parametrize("count, each", [(50, 1), (2000, 20), (20000, 200)])
def test_one_percent_is_edited_and_another_one_percent_deleted(count, each):
    edits, deletes = changes(35, count)
    assert len(edits) == len(deletes) == each
    assert not set(edits) & set(deletes)
    assert all(0 <= i < count for i in edits + deletes)
    assert changes(35, count) == (edits, deletes)


def test_an_edit_changes_the_last_section_only():
    text = page(35, 3).text
    after = edited(text, 35, 3)
    before_parts, after_parts = text.split("\n## "), after.split("\n## ")
    assert before_parts[:-1] == after_parts[:-1]
    assert after_parts[-1] != before_parts[-1] and after_parts[-1].startswith(before_parts[-1].rstrip("\n"))


def test_questions_are_seeded_and_name_pages_of_the_corpus():
    asked = questions(35, 100, 12)
    assert asked == questions(35, 100, 12) and len(asked) == 12
    services = {p.service for p in pages(35, 100)}
    assert sum(any(s in q for s in services) for q in asked) >= 6


def test_the_table_shows_each_size_side_by_side_and_a_dash_for_what_did_not_run():
    size = {
        "pages": 200,
        "rows": 690,
        "first_ingest": {"embeddings": "real model", "wall_seconds": 30.24, "ms_per_document": 151.2},
        "status": {"wall_seconds": 2.41},
    }
    lines = table({"store": {"kind": "lite"}, "sizes": [size, {**size, "pages": 2000}]}).splitlines()
    assert lines[0] == "| lite store | 200 pages | 2,000 pages |"
    assert "| first ingest, wall s (ms/document) | 30.2 (151.2) | 30.2 (151.2) |" in lines
    assert "| `cairn status`, s | 2.4 | 2.4 |" in lines
    assert "| `cairn report` (over what changed: rows checked now), s | - | - |" in lines
