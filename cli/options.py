"""The options several `cairn` commands share, declared once, and what one invocation was given before its
command (`cairn --config X status`).

Typer reads a command's options from its function's parameters, so each command declares the ones it takes
with the annotated types below; what a flag means and how it is spelt lives only here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from cairn.errors import UsageError

if TYPE_CHECKING:
    from cairn.schemas.config import CairnConfig
    from cairn.schemas.records import Principal

ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", help="config TOML (default: $CAIRN_CONFIG, else data/cairn.toml)", show_default=False),
]
JsonOption = Annotated[bool, typer.Option("--json", help="print the result as JSON on stdout, and nothing else")]
SourceOption = Annotated[str | None, typer.Option("--source", help="only this configured source", show_default=False)]
TenantOption = Annotated[str | None, typer.Option("--tenant", help="only this tenant", show_default=False)]
# The caller a search runs as (query, mcp, eval): --tenant and --group, repeatable, both checked by `principal`.
CallerTenantOption = Annotated[
    str | None, typer.Option("--tenant", help="the caller's tenant (a search runs as it)", show_default=False)
]
CallerGroupOption = Annotated[
    list[str] | None, typer.Option("--group", help="a group of the caller (repeatable)", show_default=False)
]
WaitOption = Annotated[float, typer.Option("--wait", help="seconds to wait for another run holding the index", min=0.0)]
# --strict (before 0.2: exit 1 on failed documents, which every run now does) is still accepted so that scripts
# passing it keep working; it is hidden from help and ignored.
IgnoredStrictOption = Annotated[bool, typer.Option("--strict", hidden=True, help="deprecated, ignored")]


@dataclass(frozen=True)
class Invocation:
    """What was given before the command, for every command of this invocation (`ctx.obj`)."""

    config: Path | None = None


def config_path(ctx: typer.Context, config: Path | None) -> Path | None:
    """The config named after the command, else before it, else None (the default: $CAIRN_CONFIG, data/)."""
    if config is not None:
        return config
    invocation = ctx.find_object(Invocation)
    return invocation.config if invocation else None


def load(ctx: typer.Context, config: Path | None) -> CairnConfig:
    """The configuration this command runs with (ConfigError names the file and the key at fault)."""
    from cairn.schemas.config import load_config

    return load_config(config_path(ctx, config))


def parse_date(value: str | None, flag: str) -> int | None:
    """An ISO date or date-time option -> epoch seconds (None when not given); UsageError names the flag."""
    from cairn.schemas.records import parse_day

    try:
        return parse_day(value)
    except ValueError as exc:
        raise UsageError(f"{flag}: {exc}") from None


def principal(tenant: str, groups) -> Principal:
    """The caller named by --tenant and --group; UsageError when a name is blank."""
    from cairn.schemas.records import Principal

    try:
        return Principal(tenant, groups)
    except ValueError as exc:
        raise UsageError(f"--tenant/--group: {exc}") from None
