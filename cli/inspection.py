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
    from cairn.index.derived import in_step_ledger
    from cairn.index.generations import Generations, open_serving

    cfg = load(ctx, config)
    with open_serving(cfg.milvus) as reader:  # what the name serves; NoCollection when nothing yet
        index = Generations(reader.client, cfg.milvus).status()  # and a build in progress (index/generations.py)
        with in_step_ledger(cfg.ledger_folder, reader) as derived:  # counted from the file when it is in step
            counts = derived.counts() if derived is not None else reader.counts()
            counted_from = "derived ledger" if derived is not None else "collection scan"
    rows = [{"tenant": t, "source": s, "chunk_type": c, "rows": n} for (t, s, c), n in sorted(counts.items())]
    if as_json:
        output.print_json(
            {
                "uri": cfg.milvus.uri,
                "collection": cfg.milvus.collection,
                "index": index,
                "rows": rows,
                "counted_from": counted_from,
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
    building = index["building"]
    if building:
        output.line(
            f"building {building['collection']} beside it (encoder {building['encoder']}); sources built: "
            f"{', '.join(building['built_sources']) or 'none yet'}; it serves once every source is built"
        )
    return Outcome.OK


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
    if options.as_json:
        output.print_json(result.to_dict())
    else:
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
