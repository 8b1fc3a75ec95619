"""The check outcomes the derived ledger keeps with each row (index/derived.py): which documents still need
checking under today's expectations, the tallies and examples of the rows already checked, and the few
figures a report plots of them. Everything here is SQL over that file: a report over a large collection reads
counts and a handful of rows, not every row's figures."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from cairn.quality.expectations import SIZE_SLOTS, signature
from cairn.quality.tallies import Tallies, bit_counts, example, suite_of
from cairn.schemas.config import CairnConfig

if TYPE_CHECKING:
    from cairn.index.derived import DerivedLedger, Rows

# What a report plots and sums of each row (quality/figures.py), as columns of the derived ledger.
VIEW = {
    "source_name": "source",
    "content_type": "content_type",
    "chunk_type": "chunk_type",
    "document_id": "document_id",
    "checked": "checked",
    "failed": "failed",
    "token_count": "token_count",
    "abstract_token_count": "abstract_tokens",
    "chunk_health_score": "health",
}
HEALTH_BIT = 1 << SIZE_SLOTS["chunk_health_score"]


def unchecked_documents(derived: DerivedLedger, rows: Rows, config: CairnConfig, dim: int) -> set[str]:
    """The documents with a row never checked, or checked under other expectations (another signature): one
    grouped pass over the rows, then the documents of the groups that have any."""
    out: set[str] = set()
    for source, content_type, checks, _ in derived.select(
        "source, content_type, checks, count(*)", rows, tail="group by source, content_type, checks"
    ):
        expected = signature(config, dim, source, content_type)
        if checks == expected:
            continue
        found = derived.select(
            "distinct document_id",
            rows,
            "source = ? and content_type = ? and (checks is null or checks != ?)",
            (source, content_type, expected),
        )
        out.update(d for (d,) in found)
    return out


def store(derived: DerivedLedger, checked: pd.DataFrame, config: CairnConfig, dim: int) -> int:
    """Keep the outcomes of rows just checked (validate's frame, its rows read from this ledger: each has its
    stamp). How many rows kept them."""
    if checked.empty or "stamp" not in checked:
        return 0
    signatures = {
        group: signature(config, dim, *group)
        for group in checked[["source_name", "content_type"]].drop_duplicates().itertuples(index=False, name=None)
    }
    return derived.store_checks(
        (signatures[(s, c)], int(ok), int(bad), chunk_id, stamp)
        for s, c, ok, bad, chunk_id, stamp in checked[
            ["source_name", "content_type", "checked", "failed", "chunk_id", "stamp"]
        ].itertuples(index=False, name=None)
    )


def tallies(derived: DerivedLedger, rows: Rows, limit: int) -> Tallies:
    """The tallies of these rows, those checked (rows sharing their masks counted together: a handful of groups),
    with up to `limit` failing rows per suite and check as examples."""
    out = Tallies()
    groups = derived.select(
        "source, content_type, checked, failed, count(*)",
        rows,
        "checks is not null",
        tail="group by source, content_type, checked, failed",
    )
    for source, content_type, checked, failed, n in groups:
        weight = np.int64(n)
        out.add_counts(
            (source, content_type),
            (bit_counts(np.asarray([checked], np.int64)) * weight).tolist(),
            (bit_counts(np.asarray([failed], np.int64)) * weight).tolist(),
        )
    for (source, content_type), counts in out.counts.items():
        for slot in np.flatnonzero(counts[1] > 0):
            found = derived.select(
                "figures",
                rows,
                "source = ? and content_type = ? and checks is not null and (failed >> ?) & 1 = 1",
                (source, content_type, int(slot)),
                f"limit {int(limit)}",
            )
            key = (suite_of((source, content_type), int(slot)), int(slot))
            out.examples[key] = (out.examples.get(key, []) + [example(json.loads(f)) for (f,) in found])[:limit]
    return out


def view(derived: DerivedLedger, rows: Rows) -> pd.DataFrame:
    """What a report plots and sums of these rows, those checked (VIEW)."""
    found = derived.select(", ".join(VIEW.values()), rows, "checks is not null")
    return pd.DataFrame(found, columns=list(VIEW))


def least_healthy(derived: DerivedLedger, rows: Rows, n: int) -> list[dict]:
    """The `n` least healthy sections the health check judged, as figures.health_summary names them."""
    found = derived.select(
        "figures",
        rows,
        "checks is not null and chunk_type = 'full_text' and checked & ? != 0 and health is not null",
        (HEALTH_BIT,),
        f"order by health, chunk_id limit {int(n)}",
    )
    return [json.loads(f) for (f,) in found]


def unchecked_rows(derived: DerivedLedger, rows: Rows) -> int:
    """How many of these rows have no check outcome (rewritten by a writer while they were being checked)."""
    return int(derived.select("count(*)", rows, "checks is null")[0][0])
