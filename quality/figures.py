"""The figures a report shows besides the expectations' results, computed from the frame the checks ran on
(quality/frames.py): per source, its rows and chunk health; per suite, the distributions its banded
expectations judged; the least healthy sections.

Each figure counts the rows its expectation looked at, as each row's `checked` mask records it (the scopes of
quality/expectations.py): a whole document shorter than the parent band is exempt from the parent band and from
the health check, a section shorter than the abstract band's floor from the abstract band, and a child holding
its stretch's remainder (or a definition) from the child band. So "mean health" is over the sections the
health check judged, and a chart shows what its expectation saw.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from cairn.quality.checks import Result
from cairn.quality.expectations import SIZE_SLOTS, bands
from cairn.schemas.config import CairnConfig

# each banded figure and the label of its expectation in the results (quality/expectations.py size_checks)
EXPECTATIONS = {
    "full_text": "full_text token_count",
    "child": "child token_count",
    "abstract": "abstract_token_count",
    "health": "chunk_health_score",
}
KINDS = tuple(EXPECTATIONS)


@dataclass
class Distribution:
    """The values one banded expectation of one suite judged, and its band."""

    suite: str  # "<source>.<content_type>", as Result.suite
    kind: str  # one of KINDS
    values: list[float]
    band: tuple[float, float]
    mostly: float
    exempt: int  # rows of this kind in the suite that the expectation does not judge

    @property
    def inside(self) -> float:
        """The share of values inside the band (1.0 for no values: nothing outside it)."""
        if not self.values:
            return 1.0
        low, high = self.band
        return sum(low <= v <= high for v in self.values) / len(self.values)

    def result(self, results: list[Result]) -> Result | None:
        """This expectation's result among `results`."""
        label = EXPECTATIONS[self.kind]
        return next((r for r in results if r.suite == self.suite and r.column == label), None)


def checked_rows(rows: pd.DataFrame, kind: str) -> pd.DataFrame:
    """The rows that the expectation of `kind` looked at (their `checked` mask has its slot)."""
    slot = SIZE_SLOTS[EXPECTATIONS[kind]]
    return rows[(rows["checked"].to_numpy(dtype="int64") >> slot) & 1 == 1]


def _column(kind: str) -> str:
    return {"abstract": "abstract_token_count", "health": "chunk_health_score"}.get(kind, "token_count")


def _band(kind: str, b: dict) -> tuple[tuple[float, float], float]:
    if kind == "health":
        return (b["health_min"], 1.0), b["health_mostly"]
    name = {"full_text": "parent", "child": "child", "abstract": "abstract"}[kind]
    return (b[f"{name}_min_tokens"], b[f"{name}_max_tokens"]), b[f"{name}_mostly"]


def distributions(frame: pd.DataFrame, config: CairnConfig) -> list[Distribution]:
    """Per suite (source and content type, sorted) the values each banded expectation judged: parent, child and
    abstract token counts, and the parents' chunk health. A kind with no rows in a suite is left out."""
    out = []
    for (source, content_type), typed in frame.groupby(["source_name", "content_type"], dropna=False, sort=True):
        b = bands(config, str(source), str(content_type))
        for kind in KINDS:
            every = typed[typed["chunk_type"] == ("child" if kind == "child" else "full_text")]
            if every.empty:
                continue
            rows = checked_rows(every, kind)
            values = pd.to_numeric(rows[_column(kind)], errors="coerce").dropna().astype(float).tolist()
            band, mostly = _band(kind, b)
            out.append(Distribution(f"{source}.{content_type}", kind, values, band, mostly, len(every) - len(rows)))
    return out


def source_summary(frame: pd.DataFrame, results: list[Result], health: list[Distribution]) -> dict[str, dict]:
    """Per source: its rows and documents, how many checks passed, which failed, and the health of the sections
    the health check judged (`health`: the "health" distributions): their number, mean, and the share at or over
    their suite's health_min."""
    out = {}
    for source, rows in frame.groupby("source_name", dropna=False):
        mine = [r for r in results if r.suite.split(".", 1)[0] == str(source)]
        judged = [d for d in health if d.kind == "health" and d.suite.split(".", 1)[0] == str(source)]
        scores = [v for d in judged for v in d.values]
        fit = sum(v >= d.band[0] for d in judged for v in d.values)
        out[str(source)] = {
            "rows": int(len(rows)),
            "documents": int(rows["document_id"].nunique()),
            "checks": len(mine),
            "failed": sorted(f"{r.suite}: {r.column}" for r in mine if not r.success),
            "sections": len(scores),
            "health_mean": round(sum(scores) / len(scores), 4) if scores else None,
            "health_fit": round(fit / len(scores), 4) if scores else None,
        }
    return out


def health_summary(frame: pd.DataFrame, lowest: list[dict] | None = None, worst: int = 10) -> dict:
    """The chunk health of the sections the health check judged: their number, how many were exempt, mean,
    quartiles, and the `worst` least healthy by name (`lowest`: their figures, when the frame does not name its
    rows)."""
    parents = frame[frame["chunk_type"] == "full_text"].dropna(subset=["chunk_health_score"])
    checked = checked_rows(parents, "health")
    if checked.empty:
        return {"sections": 0, "exempt": int(len(parents))}
    scores = checked["chunk_health_score"].astype(float)
    if lowest is None:
        lowest = checked.sort_values(["chunk_health_score", "chunk_id"]).head(worst).to_dict("records")
    return {
        "sections": int(len(checked)),
        "exempt": int(len(parents) - len(checked)),
        "mean": round(float(scores.mean()), 4),
        "quantiles": {f"p{int(q * 100)}": round(float(scores.quantile(q)), 4) for q in (0.05, 0.25, 0.5, 0.75)},
        "worst": [
            {
                "score": round(float(r["chunk_health_score"]), 4),
                "document_id": r["document_id"],
                "locator": r["locator"],
                "section_id": r["section_id"],
                "token_count": int(r["token_count"]),
                "merge_count": r["merge_count"],
                "split_count": r["split_count"],
            }
            for r in lowest[:worst]
        ],
    }
