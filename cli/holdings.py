"""`cairn documents` (what the index holds, document by document) and `cairn drop` (remove one source's rows).

Neither imports Prefect or loads the model.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from typing import Annotated

import typer

from cairn.cli import output
from cairn.cli.exits import Outcome
from cairn.cli.options import ConfigOption, JsonOption, TenantOption, WaitOption, load
from cairn.errors import UsageError

AnySourceOption = Annotated[
    str | None, typer.Option("--source", help="only this source (configured or not)", show_default=False)
]


def documents(
    ctx: typer.Context,
    config: ConfigOption = None,
    source: AnySourceOption = None,
    tenant: TenantOption = None,
    as_json: JsonOption = False,
) -> Outcome:
    """List what the index holds: each document version, its locator, rows, recipe, current or history."""
    from cairn.index.generations import open_serving
    from cairn.index.holdings import list_documents
    from cairn.schemas.recipe import configured_recipes

    cfg = load(ctx, config)
    recipes = configured_recipes(cfg.sources, cfg.chunking)
    with open_serving(cfg.milvus) as reader:  # nothing served yet: "no index: run `cairn ingest` first", exit 2
        found = list_documents(reader, recipes, source, tenant)
    if as_json:
        output.print_json({"documents": [d.to_dict() for d in found]})
        return Outcome.OK
    grid = output.Grid(
        [
            output.Column("source"),
            output.Column("document"),
            output.Column("version"),
            output.Column("updated"),
            output.Column("rows", "right"),
            output.Column("recipe"),
            output.Column("state"),
        ],
        title=f"{len(found)} document versions",
    )
    for d in found:
        updated = datetime.fromtimestamp(d.updated, tz=UTC).strftime("%Y-%m-%d %H:%M")
        recipe = d.recipe or "not configured"
        grid.add(d.source, d.locator, d.version[:12], updated, d.rows, recipe, "current" if d.current else "history")
    output.print_grid(grid)
    return Outcome.OK


def drop(
    ctx: typer.Context,
    source: Annotated[str, typer.Option("--source", help="the source whose rows to remove (configured or not)")],
    config: ConfigOption = None,
    yes: Annotated[
        bool, typer.Option("--yes", help="remove without asking (needed when stdin is not a terminal)")
    ] = False,
    wait: WaitOption = 0.0,
    as_json: JsonOption = False,
) -> Outcome:
    """Remove every row of one source from the index (current and history), and its cursors."""
    from cairn.flows.drop import drop_source, held_by

    cfg = load(ctx, config)
    if not yes:
        held = held_by(cfg, source, wait)
        what = f"{held.documents} of its {held.documents} indexed documents (100%)"
        if held.history_versions:
            what += f" and {held.history_versions} history versions"
        if not sys.stdin.isatty():
            raise UsageError(
                f"source {source!r}: would remove {what}: nothing removed. If it really is to go, run "
                f"`cairn drop --source {source} --yes`"
            )
        if not typer.confirm(f"remove {what} of source {source!r}?", default=False, err=True):
            raise UsageError(f"source {source!r}: nothing removed")
    dropped = drop_source(cfg, source, wait)
    if as_json:
        output.print_json(dropped.to_dict())
        return Outcome.OK
    output.line(
        f"dropped source {source!r}: {dropped.documents} documents, {dropped.history_versions} history versions, "
        f"{dropped.rows} rows removed; its cursors forgotten"
    )
    if dropped.configured:
        output.note(
            f"{source!r} is still in the configuration: the next `cairn ingest` indexes it again (remove it from "
            "the configuration to keep it out)"
        )
    return Outcome.OK
