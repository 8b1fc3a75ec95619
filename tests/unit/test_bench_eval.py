"""The ablation table (docs/benchmarks.md): one row per variant, each cell with its difference from the default,
rewritten only between its two markers, and only from saved results that hold every set, variant and question."""

import pytest

from bench.eval_corpora import HALVES, half
from bench.eval_ranks import compare, first_relevant, moved
from bench.eval_table import TABLE_END, TABLE_PAGE, TABLE_START, ablation_table, incomplete, merge_sets, write_table
from bench.eval_variants import VARIANTS
from tests.conftest import REPO


def results(delta: float = 0.01) -> dict:
    def metrics(variant: str) -> dict:
        shift = 0.0 if variant == "full" else -delta
        return {
            "metrics": {"ndcg@10": 0.7 + shift, "recall@10": 0.8, "recall@5": 0.9 + shift},
            "halves": {"tune": {"ndcg@10": 0.7 + shift}, "held_out": {"ndcg@10": 0.7 + shift}},
            "queries": 3,
        }

    return {
        "k": 10,
        "model": "bge-small-en-v1.5",
        "backend": "onnx-int8",
        "sets": {
            name: {"variants": {v: metrics(v) for v in VARIANTS}, "queries_available": 3}
            for name in ("scifact", "runbooks", "cuad")
        },
    }


def test_every_variant_has_a_row_and_each_cell_says_its_difference_from_the_default():
    table = ablation_table(results()).splitlines()
    rows = [line for line in table if line.startswith("| ") and "variant" not in line]
    assert len(rows) == len(VARIANTS)
    assert rows[0].startswith("| **the default pipeline** | 0.700 | 0.700 | 0.800 |") and "(" not in rows[0]
    assert all("0.690 (-0.010)" in row for row in rows[1:])


def test_a_difference_that_rounds_to_nothing_is_written_without_a_sign_of_its_own():
    saved = results(delta=0.0)
    saved["sets"]["scifact"]["variants"]["no_gate"]["metrics"]["recall@10"] = 0.8 - 1e-9
    row = next(line for line in ablation_table(saved).splitlines() if line.startswith("| without the query gate"))
    assert "-0.000" not in row and "0.800 (+0.000)" in row


def test_each_row_says_what_its_variant_adds_to_a_questions_time():
    saved = results()
    rerank = saved["sets"]["scifact"]["variants"]["rerank_every_top5_128"]
    rerank.update(reranked=3, rerank_ms_p50=217.4, rerank_ms_p95=289.0)
    rows = {line.split(" | ")[0]: line for line in ablation_table(saved).splitlines() if line.startswith("| ")}
    assert "added time a question" in next(line for line in rows.values() if "variant" in line)
    assert rows["| **the default pipeline**"].endswith("| 0 |")
    assert rows["| reranking every question: its top 5, 128 word pieces each"].endswith("| 217 / 289 |")


def test_the_page_is_rewritten_between_its_markers_only(tmp_path):
    page = tmp_path / "benchmarks.md"
    page.write_text(f"intro\n{TABLE_START}\nold table\n{TABLE_END}\noutro\n")
    write_table(results(), page)
    text = page.read_text()
    assert text.startswith(f"intro\n{TABLE_START}\n| variant |") and text.endswith(f"{TABLE_END}\noutro\n")
    assert "old table" not in text
    page.write_text("no markers\n")
    with pytest.raises(SystemExit, match="markers are missing"):
        write_table(results(), page)


def test_the_table_lives_in_docs_benchmarks_between_one_pair_of_markers_and_the_readme_links_there():
    """The README keeps one table of headline numbers; the ablation table, and the command in its first marker,
    are docs/benchmarks.md's, and a row for every variant is there."""
    assert TABLE_PAGE == REPO / "docs" / "benchmarks.md"
    page = TABLE_PAGE.read_text(encoding="utf-8")
    assert page.count(TABLE_START) == 1 and page.count(TABLE_END) == 1
    table = page.split(TABLE_START, 1)[1].split(TABLE_END, 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "variant" not in line]
    assert len(rows) == len(VARIANTS)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert TABLE_START not in readme and "docs/benchmarks.md" in readme


def test_a_set_measured_in_a_later_run_joins_the_saved_ones_and_replaces_only_itself():
    earlier = results()
    earlier["sets"]["scifact"]["measured"] = "2026-11-25"
    later = results(delta=0.02)
    later["sets"] = {"runbooks": later["sets"]["runbooks"]}
    merged = merge_sets(earlier, later)
    assert merged["sets"]["scifact"]["measured"] == "2026-11-25"
    assert merged["sets"]["runbooks"]["variants"]["no_gate"]["metrics"]["ndcg@10"] == pytest.approx(0.68)
    assert merged["sets"]["cuad"]["variants"]["no_gate"]["metrics"]["ndcg@10"] == pytest.approx(0.69)
    assert "(measured 2026-11-25)" in ablation_table(merged)


@pytest.mark.parametrize("key, value", [("model", "all-MiniLM-L6-v2"), ("backend", "torch"), ("k", 5)])
def test_results_of_another_model_backend_or_k_are_not_carried_over(key, value):
    earlier = {**results(), key: value}
    later = {**results(), "sets": {"runbooks": results()["sets"]["runbooks"]}}
    assert merge_sets(earlier, later) == later
    assert merge_sets(None, later) == later


def test_the_table_waits_for_every_set_variant_and_question():
    assert incomplete(results()) == []
    partial = results()
    del partial["sets"]["cuad"]
    del partial["sets"]["runbooks"]["variants"]["rrf_fusion"]
    partial["sets"]["scifact"]["queries_available"] = 809
    assert incomplete(partial) == [
        "runbooks: the variants rrf_fusion",
        "scifact: 3 of its 809 questions",
        "the cuad set",
    ]


def test_the_halves_are_fixed_by_the_question_id_and_hold_about_half_each():
    # SciFact's numeric ids by parity (even ids tune), any other id by its SHA-1: the same split on every run
    assert [half(q) for q in ("0", "1", "2", "13")] == ["tune", "held_out", "tune", "held_out"]
    names = [f"Alert{n}" for n in range(400)]
    assert [half(n) for n in names] == [half(n) for n in names] and set(map(half, names)) == set(HALVES)
    assert 160 < sum(half(n) == "tune" for n in names) < 240


def test_results_saved_before_the_halves_leave_the_held_out_column_empty():
    old = results()
    for entry in old["sets"].values():
        for run in entry["variants"].values():
            del run["halves"]
    rows = [line for line in ablation_table(old).splitlines() if line.startswith("| **the default")]
    assert rows[0].startswith("| **the default pipeline** | 0.700 |  | 0.800 |")


def test_a_question_ranks_where_its_first_relevant_item_is():
    assert first_relevant(["x", "answer", "y"], {"answer": 1}) == 2
    assert first_relevant(["a", "b"], {"b": 2, "c": 1}) == 2
    assert first_relevant(["a"], {"z": 1}) is None and first_relevant([], {"z": 1}) is None


def test_two_runs_say_which_questions_left_and_entered_the_top_k():
    # #53: CUAD's 0.841 -> 0.823 was 13 questions out of the top 5 and 6 into it, read off two runs' ranks
    before = {"q1": 4, "q2": 2, "q3": 8, "q4": None, "q5": 1, "gone": 1}
    after = {"q1": 6, "q2": None, "q3": 5, "q4": 3, "q5": 1}
    assert moved(before, after, 5) == (["q1", "q2"], ["q3", "q4"])
    saved = {"sets": {"cuad": {"variants": {"full": {"ranks": before}}}}}
    now = {"sets": {"cuad": {"variants": {"full": {"ranks": after}, "no_floors": {"ranks": after}}}}}
    report = compare(saved, now, 5)
    assert report.splitlines()[0] == "cuad full: 2 left the top 5, 2 entered it"
    assert "  left    q1: 4 -> 6" in report and "  entered q4: None -> 3" in report
    assert "no_floors" not in report  # a variant the earlier run did not measure
