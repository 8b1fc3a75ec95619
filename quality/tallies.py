"""A report's results counted from its rows' outcomes: per source and content type, how many rows each check
looked at and how many failed it, and a few failing rows as examples. The counts of rows checked now
(quality/checks.py validate) and of rows checked earlier (their outcomes kept in the derived ledger,
index/derived.py) add up, so a report over a whole collection runs great-expectations only over the rows no
one has checked under today's expectations, and counts the rest."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from cairn.quality.checks import Result, expectation_name
from cairn.quality.expectations import METADATA_SLOTS, bands, metadata_checks, size_checks
from cairn.schemas.config import CairnConfig

SLOTS = METADATA_SLOTS + 4
EXAMPLE_FIELDS = ("chunk_id", "document_id", "section_id", "locator", "token_count")
Group = tuple[str, str]  # (source, content type)


@dataclass
class Tallies:
    """Per (source, content type): rows looked at and rows failed per slot (two arrays of SLOTS counts), and
    per (suite, slot) a few failing rows."""

    counts: dict[Group, np.ndarray] = field(default_factory=dict)  # group -> int64[2, SLOTS]: checked, failed
    examples: dict[tuple[str, int], list[dict]] = field(default_factory=dict)

    def add(self, other: Tallies, limit: int) -> Tallies:
        for group, counts in other.counts.items():
            self.counts[group] = self.counts.get(group, np.zeros((2, SLOTS), np.int64)) + counts
        for key, rows in other.examples.items():
            self.examples[key] = (self.examples.get(key, []) + rows)[:limit]
        return self

    def add_counts(self, group: Group, checked: list[int], failed: list[int]) -> None:
        counts = np.asarray([checked, failed], np.int64)
        self.counts[group] = self.counts.get(group, np.zeros((2, SLOTS), np.int64)) + counts


def bit_counts(masks: np.ndarray) -> np.ndarray:
    """How many of these masks have each slot's bit set."""
    return ((masks[:, None] >> np.arange(SLOTS)) & 1).sum(axis=0)


def suite_of(group: Group, slot: int) -> str:
    """The suite a slot's result belongs to: the source's metadata suite, or its content type's size suite."""
    return group[0] if slot < METADATA_SLOTS else f"{group[0]}.{group[1]}"


def example(row: Any) -> dict:
    token_count = row.get("token_count")
    return {
        "chunk_id": row.get("chunk_id"),
        "document_id": row.get("document_id"),
        "section_id": row.get("section_id"),
        "locator": row.get("locator"),
        "token_count": None if token_count is None or pd.isna(token_count) else int(token_count),
    }


def tally(checked: pd.DataFrame, limit: int) -> Tallies:
    """The tallies of rows with their outcomes (validate's frame)."""
    out = Tallies()
    for (source, content_type), rows in checked.groupby(["source_name", "content_type"], dropna=False):
        group = (str(source), str(content_type))
        out.add_counts(
            group,
            bit_counts(rows["checked"].to_numpy(np.int64)).tolist(),
            bit_counts(rows["failed"].to_numpy(np.int64)).tolist(),
        )
        failed = rows["failed"].to_numpy(np.int64)
        for slot in range(SLOTS):
            hit = rows[(failed >> slot) & 1 == 1]
            if len(hit):
                key = (suite_of(group, slot), slot)
                found = [example(r) for r in hit.head(limit).to_dict("records")]
                out.examples[key] = (out.examples.get(key, []) + found)[:limit]
    return out


def results_of(tallies: Tallies, config: CairnConfig, dim: int) -> list[Result]:
    """One result per check of every suite the tallies hold, as great-expectations judges them: per source its
    metadata suite (every content type's rows), then per content type its size suite."""
    out: list[Result] = []
    for source in sorted({source for source, _ in tallies.counts}):
        groups = sorted(g for g in tallies.counts if g[0] == source)
        metadata = sum((tallies.counts[g] for g in groups), np.zeros((2, SLOTS), np.int64))
        out += [_result(source, c, metadata, tallies) for c in metadata_checks(dim)]
        for group in groups:
            for check in size_checks(bands(config, *group)):
                out.append(_result(f"{source}.{group[1]}", check, tallies.counts[group], tallies))
    return out


def _result(suite: str, check, counts: np.ndarray, tallies: Tallies) -> Result:
    looked, failed = int(counts[0, check.slot]), int(counts[1, check.slot])
    return Result(
        suite=suite,
        expectation=expectation_name(check.kind),
        column=check.label,
        success=check.passes(looked, failed),
        unexpected_percent=100.0 * failed / looked if looked else 0.0,
        element_count=looked,
        examples=tallies.examples.get((suite, check.slot), []),
        params={k: sorted(v, key=str) if isinstance(v, (set, frozenset)) else v for k, v in check.params.items()},
    )
