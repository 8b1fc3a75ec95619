"""Each question's rank in a bench.eval run, and two saved runs compared question by question: which questions a
change moved out of and into the top k (`python -m bench.eval --compare BEFORE AFTER --at 5`; #53: CUAD's fall
from 0.841 to 0.823 was 13 questions out of the top 5 and 6 into it)."""

from __future__ import annotations


def first_relevant(ranked: list[str], relevant: dict[str, int]) -> int | None:
    """Where the first relevant item (CUAD: "answer") is in a question's ranking, from 1; None: not returned."""
    return next((rank for rank, item in enumerate(ranked, 1) if relevant.get(item, 0) > 0), None)


def moved(before: dict[str, int | None], after: dict[str, int | None], k: int) -> tuple[list[str], list[str]]:
    """The questions whose first relevant item left the top k between two runs' `ranks`, and those whose entered
    it (questions asked in both only): what a change of a figure is made of, question by question."""

    def within(rank: int | None) -> bool:
        return rank is not None and rank <= k

    both = [q for q in before if q in after]
    return (
        [q for q in both if within(before[q]) and not within(after[q])],
        [q for q in both if within(after[q]) and not within(before[q])],
    )


def compare(before: dict, after: dict, k: int) -> str:
    """Two saved results (bench/results/*.json), each set and variant both hold: the questions that left and
    entered the top k, with their ranks (`python -m bench.eval --compare BEFORE AFTER --at 5`)."""
    lines = []
    for name, entry in after["sets"].items():
        for variant, run in entry["variants"].items():
            old = before["sets"].get(name, {}).get("variants", {}).get(variant)
            if old is None or "ranks" not in old or "ranks" not in run:
                continue
            lost, won = moved(old["ranks"], run["ranks"], k)
            lines.append(f"{name} {variant}: {len(lost)} left the top {k}, {len(won)} entered it")
            lines += [f"  left    {q}: {old['ranks'][q]} -> {run['ranks'][q]}" for q in lost]
            lines += [f"  entered {q}: {old['ranks'][q]} -> {run['ranks'][q]}" for q in won]
    return "\n".join(lines)
