"""Running the expectations (quality/expectations.py) with great-expectations over a frame of row figures:
each row's outcome as two bit masks (the checks that looked at it, the checks it failed), from which every
report's results are counted (quality/tallies.py).

GE runs in a file context inside the report folder, so its Data Docs are written there too.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from cairn.quality.expectations import Check, checked_masks, suites
from cairn.schemas.config import CairnConfig

log = logging.getLogger(__name__)
ROW = "row_number"  # the frame's position, what great-expectations names each unexpected row by


@dataclass
class Result:
    suite: str  # "<source>" or "<source>.<content_type>"
    expectation: str
    column: str
    success: bool
    unexpected_percent: float
    element_count: int  # the rows the check looked at (great-expectations' element count less its missing count)
    examples: list[dict] = field(default_factory=list)
    params: dict = field(default_factory=dict)  # what the expectation asked: min_value, max_value, mostly, value_set...

    def to_dict(self) -> dict:
        return {
            "suite": self.suite,
            "expectation": self.expectation,
            "column": self.column,
            "success": self.success,
            "unexpected_percent": round(self.unexpected_percent, 3),
            "element_count": self.element_count,
            "examples": self.examples,
            "params": self.params,
        }

    def describe_params(self) -> str:
        """The parameters as a person reads them: "400 to 900, mostly 0.95"."""
        p = self.params
        parts = []
        if "min_value" in p or "max_value" in p:
            low, high = (
                f"{v:g}" if isinstance(v, (int, float)) else v for v in (p.get("min_value"), p.get("max_value"))
            )
            parts.append(
                f"{low} to {high}"
                if low is not None and high is not None
                else f">= {low}"
                if low is not None
                else f"<= {high}"
            )
        if "value_set" in p:
            values = [str(v) for v in p["value_set"]]
            parts.append("one of " + ", ".join(values[:8]) + (f" (+{len(values) - 8})" if len(values) > 8 else ""))
        if p.get("or_equal") is not None:
            parts.append("or equal" if p["or_equal"] else "strictly")
        if p.get("mostly") is not None:
            parts.append(f"mostly {p['mostly']:g}")
        return ", ".join(parts)


def expectation_name(kind: str) -> str:
    """great-expectations' own name of an expectation class: ExpectColumnValuesToBeUnique ->
    expect_column_values_to_be_unique."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", kind).lower()


def _quiet_gx() -> None:
    logging.getLogger("great_expectations").setLevel(logging.ERROR)


class CompiledTemplates:
    """The Data Docs templates compiled once per process. great-expectations makes a new jinja2 Environment for
    every page it renders, so each run compiled its 54 templates again: 0.3 of the 0.4 s of CPU its Data Docs
    took in the checks server (quality/server.py), on every small run's path. jinja2's bytecode cache keeps them,
    keyed by template name and file and checked against the template's source (a changed template is compiled
    again). Each run's context brings one template of its own (its folder's custom styles), so the least recently
    used beyond `limit` are let go: a server up for weeks holds at most that many. `hits` and `compiled` count what
    it served and what it stored."""

    def __init__(self, limit: int = 256) -> None:
        self.code: dict[str, bytes] = {}  # in order of last use
        self.limit, self.hits, self.compiled = limit, 0, 0

    def load(self, bucket: Any) -> None:
        code = self.code.pop(bucket.key, None)
        if code is not None:
            self.code[bucket.key] = code
            bucket.bytecode_from_string(code)  # jinja2 resets it if the template's source changed since
            self.hits += 1

    def dump(self, bucket: Any) -> None:
        self.code.pop(bucket.key, None)
        self.code[bucket.key] = bucket.bytecode_to_string()
        self.compiled += 1
        while len(self.code) > self.limit:
            del self.code[next(iter(self.code))]

    def install(self) -> bool:
        """Every Data Docs view made from now on in this process compiles through this cache (its module's jinja2
        Environment, and only its, made with it); whether great-expectations has the module this expects (if not,
        pages are compiled per view, as before, and nothing else changes)."""
        import jinja2

        try:
            from great_expectations.render.view import view
        except ImportError:
            return False
        made = getattr(view, "Environment", None)
        if not (isinstance(made, type) and issubclass(made, jinja2.Environment)):
            return False
        templates = self

        class Cache(jinja2.BytecodeCache):
            def load_bytecode(self, bucket: Any) -> None:
                templates.load(bucket)

            def dump_bytecode(self, bucket: Any) -> None:
                templates.dump(bucket)

        cache = Cache()

        class Environment(made):  # type: ignore[valid-type, misc]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                kwargs.setdefault("bytecode_cache", cache)
                super().__init__(*args, **kwargs)

        view.Environment = Environment
        return True


def validate(frame: pd.DataFrame, config: CairnConfig, dim: int, folder: Path) -> pd.DataFrame:
    """Every suite over the frame in a GE file context under `folder` (its Data Docs built once at the end: a
    checkpoint per suite rebuilt them after each one, 0.7 s a suite); the frame's rows with their outcomes, as
    quality/tallies.py reads them: `checked` and `failed` bit masks (a check's slot is its bit)."""
    import great_expectations as gx
    from great_expectations.core.result_format import ResultFormat

    _quiet_gx()
    context = gx.get_context(mode="file", project_root_dir=str(folder))
    try:
        context.variables.progress_bars = gx.data_context.types.base.ProgressBarsConfig(globally=False)
    except Exception:  # noqa: BLE001 - older layouts: bars only clutter the log, and their absence is harmless
        pass
    source_ds = context.data_sources.add_pandas("cairn")
    result_format = {"result_format": ResultFormat.COMPLETE, "unexpected_index_column_names": [ROW]}
    frame = frame.reset_index(drop=True)
    frame[ROW] = np.arange(len(frame))
    checked = checked_masks(frame, config, dim)
    failed = np.zeros(len(frame), dtype=np.int64)
    for number, (suite_name, rows, checks) in enumerate(suites(frame, config, dim)):
        asset = source_ds.add_dataframe_asset(f"rows_{number}")
        batch = asset.add_batch_definition_whole_dataframe("all")
        # the whole suite in one store write (adding expectations one by one rewrote the suite's file each time)
        suite = context.suites.add(gx.ExpectationSuite(name=suite_name, expectations=[c.expectation() for c in checks]))
        by_id = {added.id: check for check, added in zip(checks, suite.expectations, strict=True)}
        definition = context.validation_definitions.add(
            gx.ValidationDefinition(name=suite_name, data=batch, suite=suite)
        )
        validation = definition.run(
            batch_parameters={"dataframe": rows.reset_index(drop=True)}, result_format=result_format
        )
        for outcome in validation.results:
            check = by_id[outcome.expectation_config.id]
            data, looked = outcome.result or {}, check.looked_at(rows)
            if _raised(outcome.exception_info):  # the check could not run: every row it looks at fails it
                log.error("%s %s could not run: %s", suite_name, check.label, outcome.exception_info)
                failed[rows.loc[looked, ROW].to_numpy()] |= np.int64(1) << check.slot
                continue
            unexpected = [u[ROW] for u in data.get("unexpected_index_list") or [] if isinstance(u, dict)]
            failed[np.asarray(unexpected, dtype=np.int64)] |= np.int64(1) << check.slot
            _compare(suite_name, check, data, int(looked.sum()), len(set(unexpected)), bool(outcome.success))
    context.build_data_docs()  # from the validation results each run above stored
    return frame.assign(checked=checked, failed=failed).drop(columns=[ROW])


def _raised(info) -> bool:
    """Whether great-expectations' exception_info (one, or one per metric) says the check raised."""
    if not isinstance(info, dict):
        return False
    return bool(info.get("raised_exception")) or any(
        isinstance(v, dict) and v.get("raised_exception") for v in info.values()
    )


def _compare(suite: str, check: Check, data: dict, looked: int, unexpected: int, success: bool) -> None:
    """Cairn counts every report from the rows' masks: say so loudly if they ever disagree with great-expectations'
    own counts (a changed library, a scope that no longer matches its row condition)."""
    theirs = int(data.get("element_count") or 0) - int(data.get("missing_count") or 0)
    if (theirs, int(data.get("unexpected_count") or 0)) != (looked, unexpected) or success != check.passes(
        looked, unexpected
    ):
        log.warning(
            "%s %s: great-expectations looked at %d rows and found %d unexpected (success %s); Cairn counted %d and"
            " %d: the report counts Cairn's",
            suite,
            check.label,
            theirs,
            int(data.get("unexpected_count") or 0),
            success,
            looked,
            unexpected,
        )
