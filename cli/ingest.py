"""`cairn ingest`, `cairn backfill`, `cairn reconcile`: the commands that write the collection or compare it
with the sources. Ingest and backfill run flows/run.py's run of the same name, in this process or as a Prefect flow
run (cli/flowrun.py; imported inside the command: Prefect is heavy); reconcile compares without Prefect, and with
--fix runs an ingest for each drifting source.

Each command function only declares its flags and hands a typed options record to its `run_*` function.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from cairn.cli import output
from cairn.cli.exits import Outcome
from cairn.cli.flowrun import Run, begin_run, call_run, hosting, run_flow
from cairn.cli.options import ConfigOption, IgnoredStrictOption, JsonOption, SourceOption, WaitOption, load, parse_date
from cairn.errors import UsageError
from cairn.schemas.run_report import SOURCE_FAILURE, Failure, IndexReport, RunReport

if TYPE_CHECKING:
    from cairn.flows.reconcile import Drift, LedgerCheck
    from cairn.schemas.config import CairnConfig

Cleanup = Literal["incremental", "full", "none"]


@dataclass(frozen=True)
class IngestOptions:
    source: str | None = None
    cleanup: Cleanup | None = None  # None: each source's own cleanup mode
    wait: float = 0.0
    as_json: bool = False
    allow_mass_delete: bool = False


@dataclass(frozen=True)
class BackfillOptions:
    source: str
    since: str | None = None  # ISO date, inclusive
    until: str | None = None  # ISO date, exclusive
    commits: int | None = None
    full: bool = False
    wait: float = 0.0
    as_json: bool = False


@dataclass(frozen=True)
class ReconcileOptions:
    source: str | None = None
    fix: bool = False
    wait: float = 0.0
    as_json: bool = False
    scan: bool = False


def ingest(
    ctx: typer.Context,
    config: ConfigOption = None,
    source: SourceOption = None,
    cleanup: Annotated[
        Cleanup | None,
        typer.Option("--cleanup", help="override each source's cleanup mode for this run", show_default=False),
    ] = None,
    wait: WaitOption = 0.0,
    as_json: JsonOption = False,
    strict: IgnoredStrictOption = False,
    allow_mass_delete: Annotated[
        bool,
        typer.Option(
            "--allow-mass-delete", help="remove what a source no longer yields even past its max_delete_share"
        ),
    ] = False,
) -> Outcome:
    """Bring the index in line with the configured sources."""
    return run_ingest(load(ctx, config), IngestOptions(source, cleanup, wait, as_json, allow_mass_delete))


def backfill(
    ctx: typer.Context,
    source: Annotated[str, typer.Option("--source", help="the configured source to re-process")],
    config: ConfigOption = None,
    since: Annotated[str | None, typer.Option("--since", help="ISO date: documents updated at or after it")] = None,
    until: Annotated[str | None, typer.Option("--until", help="ISO date: documents updated before it")] = None,
    commits: Annotated[
        int | None,
        typer.Option(
            "--commits", help="git sources with keep_history: past versions written by the last N commits", min=1
        ),
    ] = None,
    full: Annotated[bool, typer.Option("--full", help="every document, whatever its date")] = False,
    wait: WaitOption = 0.0,
    as_json: JsonOption = False,
    strict: IgnoredStrictOption = False,
) -> Outcome:
    """Re-process a window of a source, or all of it."""
    options = BackfillOptions(source, since, until, commits, full, wait, as_json)
    check_backfill(options)
    return run_backfill(load(ctx, config), options)


def reconcile(
    ctx: typer.Context,
    config: ConfigOption = None,
    source: SourceOption = None,
    fix: Annotated[bool, typer.Option("--fix", help="re-index and clean up until the collection matches")] = False,
    wait: WaitOption = 0.0,
    as_json: JsonOption = False,
    scan: Annotated[
        bool, typer.Option("--scan", help="also compare the derived ledger with the collection, row by row")
    ] = False,
) -> Outcome:
    """Compare the sources with the collection; --fix repairs."""
    return run_reconcile(load(ctx, config), ReconcileOptions(source, fix, wait, as_json, scan))


def run_ingest(config: CairnConfig, options: IngestOptions) -> Outcome:
    """Run the ingest flow over every configured source (or one) and print its run report."""
    if options.source:
        config.source(options.source)  # fail fast on an unknown name
    if not config.milvus.is_lite:
        from cairn.index.milvus import Connection

        Connection.open(config.milvus, create=True).close()  # fail fast: an unreachable server
    parameters = {"cleanup": options.cleanup, "allow_mass_delete": options.allow_mass_delete}
    return run_printed(
        "ingest", config, options.as_json, source=options.source, wait_seconds=options.wait, **parameters
    )


def check_backfill(options: BackfillOptions) -> None:
    """Refuse a bad date before anything runs (UsageError naming the flag)."""
    parse_date(options.since, "--since")
    parse_date(options.until, "--until")
    if options.full and (options.since or options.until):
        raise UsageError("--full re-processes every document: drop --since/--until, or drop --full")


def run_backfill(config: CairnConfig, options: BackfillOptions) -> Outcome:
    """Run the backfill flow over one source's window and print its run report."""
    config.source(options.source)
    window = {"since": options.since, "until": options.until, "commits": options.commits}  # --full: none, every one
    return run_printed("backfill", config, options.as_json, source=options.source, wait_seconds=options.wait, **window)


def run_printed(run: Run, config: CairnConfig, as_json: bool, **parameters: object) -> Outcome:
    """`run` (flows/run.py's ingest or backfill, with its `parameters`) in this process or as a flow run
    (cli/flowrun.py), its run report printed: what it means."""
    launch = begin_run(config)  # a local Prefect server, if one is used, starts while the run's modules import
    return print_run_report(run_flow(run, config, as_json, launch, **parameters), as_json)


def print_run_report(report: RunReport, as_json: bool) -> Outcome:
    """The run report as JSON, or as a summary (each failure, skip and warning on stderr), and what it means: a
    source that failed as a whole, some documents that failed, or every input accounted for."""
    if as_json:
        output.print_json(report.to_dict())
    else:
        d = report.documents
        history = f", {d.history_versions} history versions" if d.history_versions else ""
        failed = report.failed_sources  # each with its own FAILED line on stderr; none is a failed document
        sources = f"; sources: {len(failed)} of {len(report.sources)} failed" if failed else ""
        output.line(
            f"documents: {d.seen} seen, {d.indexed} indexed, {d.unchanged} unchanged, "
            f"{d.skipped} skipped, {d.deleted} deleted, {d.failed} failed{history}{sources}",
            style="bold",
        )
        if report.reindexed:  # indexed at a version the collection held, and why (a new recipe, new access settings)
            again = sorted(report.reindexed.items())
            output.line("indexed again: " + ", ".join(f"{n} ({why})" for why, n in again))
            for source, changes in report.recipe_changes.items():
                output.line(f"  {source}: recipe changed: {'; '.join(changes)}")
        output.line(
            f"sections: {report.sections}  chunks: {report.chunks}  tokens: {report.tokens}  "
            f"embeddings computed: {report.embeddings_computed}"
        )
        output.line(
            f"seconds: {round(report.seconds, 3):.1f} (the model: {round(report.model_seconds, 3):.1f})  "
            f"chunks/s: {round(report.chunks_per_second, 2):.1f}"
        )
        quality = report.quality
        if quality:
            verdict = "passed" if quality.success else f"FAILED ({'; '.join(map(output.value, quality.failed))})"
            output.line(
                f"data quality: {verdict}; report: {output.value(quality.report_dir)}/index.html",
                style="green" if quality.success else "red",
            )
        for failure in report.failures:
            output.problem(failure_line(failure))
        for skipped in report.skipped:  # nothing to index; those remembered from earlier runs: only counted
            if skipped.read:
                output.note(f"SKIPPED {shown(skipped.source, skipped.document, skipped.reason)}")
        for warning in report.warnings:  # indexed, with a caveat (a PDF's pages without text)
            output.problem(f"WARNING {shown(warning.source, warning.document, warning.error)}")
        if report.index is not None:
            print_index_switch(report.index)
        if report.unconfigured_sources:  # one line, every run, until they are dropped
            output.problem(
                f"WARNING in the index but not in the configuration (queries still answer from them): "
                f"{shown(', '.join(report.unconfigured_sources))}; `cairn drop --source NAME` removes one"
            )
    if report.failed_sources:
        return Outcome.SOURCES_FAILED
    return Outcome.INPUTS_FAILED if report.failures else Outcome.OK


def failure_line(failure: Failure) -> str:
    """A failed input in one line; a whole source's failure (document "*") names the source once."""
    if failure.document == SOURCE_FAILURE:
        named, error = f"source {failure.source!r}", failure.error
        return output.value(f"FAILED {error if error.startswith(named) else f'{named}: {error}'}")
    refused = "REFUSED" if failure.policy else "FAILED"
    return f"{refused} {shown(failure.source, failure.document, failure.error)}"


def shown(*parts: object) -> str:
    """`source: document: reason`, each part from the data with its control characters escaped (one line)."""
    return ": ".join(output.value(part) for part in parts)


def print_index_switch(index: IndexReport) -> None:
    """A rebuild beside the serving collection (index/generations.py): switched, or still waiting."""
    if index.switch == "pending":
        output.problem(
            f"rebuilding into {index.collection} ({index.rebuild}): {index.serving} keeps serving "
            f"until every source is built; waiting for: {', '.join(index.waiting_for)}"
        )
    elif index.switch == "done":
        output.line(f"rebuilt ({index.rebuild}): now serving {index.serving}; dropped {index.dropped}", style="green")


def run_reconcile(config: CairnConfig, options: ReconcileOptions) -> Outcome:
    """Compare sources and collection; with --fix, the derived ledger checked row by row (and rebuilt when it
    differs), a full ingest of each drifting source, then compare again."""
    from cairn.flows.reconcile import rebuild_ledger
    from cairn.flows.reconcile import reconcile as compare

    if options.source:
        config.source(options.source)
    found = compare(config, options.source, scan=options.fix or options.scan)
    repaired = None
    if options.fix and (not found.clean or (found.ledger.scanned and not found.ledger.trusted)):
        drifts = found.drifts
        if not found.ledger.trusted:  # rows changed behind Cairn's back: the ledger first, then what it shows
            rebuild_ledger(config, options.wait)
            drifts = compare(config, options.source).drifts
        fixable = [d for d in drifts if not d.clean and not d.error]
        if fixable:
            launch = begin_run(config)
            with hosting(launch):
                for drift in fixable:
                    call_run("ingest", config, launch, source=drift.source, cleanup="full", wait_seconds=options.wait)
        repaired = compare(config, options.source, scan=True)
    final = repaired if repaired is not None else found
    if options.as_json:
        data = {"clean": final.clean, "sources": [d.to_dict() for d in found.drifts], "ledger": found.ledger.to_dict()}
        data["unconfigured_sources"] = final.unconfigured
        if repaired is not None:
            data["after_fix"] = [d.to_dict() for d in repaired.drifts]
            data["ledger_after_fix"] = repaired.ledger.to_dict()
        output.print_json(data)
    else:
        print_ledger("found", found.ledger)
        print_drifts("found", found.drifts)
        if repaired is not None:
            print_ledger("after fix", repaired.ledger)
            print_drifts("after fix", repaired.drifts)
        for name in final.unconfigured:
            output.line(f"[{'after fix' if repaired else 'found'}] {unconfigured_line(name)}", style="bold red")
    return Outcome.OK if final.clean else Outcome.DRIFT


def unconfigured_line(name: str) -> str:
    """The one line that names a source with rows in the index that the configuration does not name."""
    return (
        f"{name}: DRIFT: in the index but not in the configuration (queries still answer from it): "
        f"`cairn drop --source {name}` removes its rows"
    )


def print_ledger(label: str, check: LedgerCheck) -> None:
    """The derived ledger's line: compared with the collection, or only by its mark."""
    if check.scanned and check.differing:
        examples = ", ".join(check.examples)
        output.line(
            f"[{label}] derived ledger: {check.differing} rows differ from the collection (e.g. {examples}); "
            "`cairn reconcile --fix` rebuilds it",
            style="bold red",
        )
    elif check.scanned:
        output.line(f"[{label}] derived ledger: matches the collection row by row", style="green")
    elif not check.in_step:
        output.line(f"[{label}] derived ledger: not in step (the next ingest rebuilds it); read the collection")


def print_drifts(label: str, drifts: list[Drift]) -> None:
    """One line per source, then each missing (and why), outdated, stale or incomplete document under it, the
    documents a policy refused (not drift), and how many held nothing to index."""
    for d in drifts:
        state = "clean" if d.clean else "DRIFT"
        output.line(
            f"[{label}] {d.source}: {state}: {d.documents_in_source} in source, {d.documents_indexed} indexed, "
            f"{d.rows_current} current rows",
            style="green" if d.clean else "bold red",
        )
        for item in d.missing:
            why = f"failed at the last ingest: {d.failed[item]}" if item in d.failed else "not ingested yet"
            output.line(f"  missing: {item} ({why})")
        for name in ("outdated", "stale"):
            for item in getattr(d, name):
                output.line(f"  {name}: {item}")
        for item, reason in d.refused.items():
            output.line(f"  refused by policy (not drift): {item}: {reason}")
        if d.skipped:
            output.line(f"  skipped: {len(d.skipped)} with nothing to index (e.g. {next(iter(d.skipped))})")
        for item, problems in d.incomplete.items():
            output.line(f"  incomplete: {item}: {'; '.join(problems)}")
        if d.orphan_rows:
            output.line(f"  orphan rows: {d.orphan_rows}")
        if d.error:
            output.line(f"  error: {d.error}", style="red")
