"""`cairn status` and `cairn report`: what the collection holds, and whether it passes the data-quality checks.

`status` reads row counts through the Milvus access layer only (no Prefect, no model); `report` runs the
great-expectations suites the `cairn-report` flow runs, without a Prefect server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import typer

from cairn.cli import output
from cairn.cli.exits import Outcome
from cairn.cli.options import ConfigOption, JsonOption, SourceOption, TenantOption, load


@dataclass(frozen=True)
class ReportOptions:
    source: str | None = None
    tenant: str | None = None
    as_json: bool = False
    scan: bool = False


def status(ctx: typer.Context, config: ConfigOption = None, as_json: JsonOption = False) -> Outcome:
    """Rows per tenant, source and chunk type."""
    from cairn.index.engine_import import import_pymilvus

    import_pymilvus()  # without pandas and requests (index/engine_import.py)
    from cairn.index.derived import in_step_ledger
    from cairn.index.generations import Generations, open_serving
    from cairn.index.holdings import read_holdings
    from cairn.schemas.recipe import configured_recipes

    cfg = load(ctx, config)
    with open_serving(cfg.milvus) as reader:  # what the name serves; NoCollection when nothing yet
        index = Generations(reader.client, cfg.milvus).status()  # and a build in progress (index/generations.py)
        with in_step_ledger(cfg.ledger_folder, reader) as derived:  # counted from the file when it is in step
            counts = derived.counts() if derived is not None else reader.counts()
            counted_from = "derived ledger" if derived is not None else "collection scan"
            held = read_holdings(reader, derived, configured_recipes(cfg.sources, cfg.chunking))
    rows = [{"tenant": t, "source": s, "chunk_type": c, "rows": n} for (t, s, c), n in sorted(counts.items())]
    if as_json:
        output.print_json(
            {
                "uri": cfg.milvus.uri,
                "collection": cfg.milvus.collection,
                "index": index,
                "rows": rows,
                "counted_from": counted_from,
                "sources": [h.to_dict() for h in held],  # docs/guarantees.md, "Counts"
            }
        )
        return Outcome.OK
    grid = output.Grid(
        [output.Column("tenant"), output.Column("source"), output.Column("chunk_type"), output.Column("rows", "right")],
        title=f"{cfg.milvus.uri} / {cfg.milvus.collection} (serving {index['serving']}, "
        f"encoder {index['encoder']}): {sum(counts.values())} rows (counted from the {counted_from})",
    )
    for row in rows:
        grid.add(row["tenant"], row["source"], row["chunk_type"], row["rows"])
    output.print_grid(grid)
    print_holdings(held)
    building = index["building"]
    if building:
        output.line(
            f"building {building['collection']} beside it (encoder {building['encoder']}); sources built: "
            f"{', '.join(building['built_sources']) or 'none yet'}; it serves once every source is built"
        )
    return Outcome.OK


def held_now(config) -> list:
    """What the serving collection holds per source (index/holdings.py), from its derived ledger when in step."""
    from cairn.index.derived import in_step_ledger
    from cairn.index.generations import open_serving
    from cairn.index.holdings import read_holdings
    from cairn.schemas.recipe import configured_recipes

    with open_serving(config.milvus) as reader, in_step_ledger(config.ledger_folder, reader) as derived:
        return read_holdings(reader, derived, configured_recipes(config.sources, config.chunking))


def print_holdings(held: list, counts: bool = True) -> None:
    """Per source, in the counts' one vocabulary (index/holdings.py): documents, history versions, rows by kind
    (`counts`); then what is not as configured: rows on an older recipe, a source the configuration no longer
    names."""
    for h in held if counts else []:
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(h.rows.items()))
        output.line(
            f"{h.source}: {h.documents} documents, {h.history_versions} history versions; "
            f"current rows: {kinds or 'none'}; history rows: {h.history_rows}"
        )
    for h in held:
        if h.older_recipe_rows:
            output.problem(
                f"{h.source}: {h.older_recipe_rows} of its {h.current_rows} current rows were made by an older recipe "
                "(chunking, parser or row-shaping settings, or an older Cairn): the next `cairn ingest` re-chunks them"
            )
        if not h.configured:
            output.problem(
                f"{h.source}: in the index but not in the configuration (queries still answer from it): "
                f"`cairn drop --source {h.source}` removes its rows"
            )


def report(
    ctx: typer.Context,
    config: ConfigOption = None,
    source: SourceOption = None,
    tenant: TenantOption = None,
    as_json: JsonOption = False,
    scan: Annotated[
        bool, typer.Option("--scan", help="read every row from the collection instead of the derived ledger")
    ] = False,
) -> Outcome:
    """Data-quality checks over the collection, written as a report folder.

    Exits 1 when an expectation fails."""
    return run_report(load(ctx, config), ReportOptions(source, tenant, as_json, scan))


def run_report(config, options: ReportOptions) -> Outcome:
    """The checks of one source and/or tenant (or all), the report folder written, the verdict printed."""
    if options.source:
        config.source(options.source)  # fail fast on an unknown name, before Prefect is imported
    from cairn.embedding import encoder_for
    from cairn.quality import quality_report

    dim = encoder_for(config.embedding).dim  # no weights loaded
    result = quality_report(config, dim, options.source, options.tenant, options.scan)  # as the cairn-report flow
    held = [h for h in held_now(config) if options.source in (None, h.source)]
    older = sum(h.older_recipe_rows for h in held)
    if options.as_json:
        output.print_json({**result.to_dict(), "older_recipe_rows": older})
    else:
        print_holdings([h for h in held if h.older_recipe_rows or not h.configured], counts=False)
        failed = result.failed()
        verdict = "PASSED" if result.success else "FAILED"
        output.line(
            f"{verdict}: {len(failed)} of {len(result.results)} expectations failed over {result.rows} rows",
            style="bold green" if result.success else "bold red",
        )
        if failed:
            grid = output.Grid(
                [
                    output.Column("suite"),
                    output.Column("column"),
                    output.Column("expectation"),
                    output.Column("unexpected", "right"),
                ]
            )
            for r in failed:
                grid.add(r.suite, r.column, r.expectation, f"{r.unexpected_percent:.2f}%")
            output.print_grid(grid)
        output.line(f"report: {result.report_dir}/index.html")
    return Outcome.OK if result.success else Outcome.CHECKS_FAILED
