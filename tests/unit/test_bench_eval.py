"""The README's ablation table: one row per variant, each cell with its difference from the default, and
rewritten only between its two markers."""
import pytest

from bench.eval import TABLE_END, TABLE_START, VARIANTS, ablation_table, write_readme_table


def results(delta: float = 0.01) -> dict:
    def metrics(variant: str) -> dict:
        shift = 0.0 if variant == "full" else -delta
        return {"metrics": {"ndcg@10": 0.7 + shift, "recall@10": 0.8, "recall@5": 0.9 + shift}, "queries": 3}

    return {"k": 10, "backend": "torch",
            "sets": {name: {"variants": {v: metrics(v) for v in VARIANTS}} for name in ("scifact", "runbooks", "cuad")}}


def test_every_variant_has_a_row_and_each_cell_says_its_difference_from_the_default():
    table = ablation_table(results()).splitlines()
    rows = [line for line in table if line.startswith("| ") and "variant" not in line]
    assert len(rows) == len(VARIANTS)
    assert rows[0].startswith("| **the default pipeline** | 0.700 | 0.800 |") and "(" not in rows[0]
    assert all("0.690 (-0.010)" in row for row in rows[1:])


def test_the_readme_is_rewritten_between_its_markers_only(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{TABLE_START}\nold table\n{TABLE_END}\noutro\n")
    write_readme_table(results(), readme)
    text = readme.read_text()
    assert text.startswith(f"intro\n{TABLE_START}\n| variant |") and text.endswith(f"{TABLE_END}\noutro\n")
    assert "old table" not in text
    readme.write_text("no markers\n")
    with pytest.raises(SystemExit, match="markers are missing"):
        write_readme_table(results(), readme)
