"""Checks of setting values that a type alone cannot say, run when the configuration is loaded: a value that
could only fail later (a hook that cannot be imported, a malformed URI or template) is refused before anything runs.

Each raises ValueError saying what is wrong and what is allowed; the model validators that call them hand it
to pydantic, and `load_config` turns it into a ConfigError naming the file and the key.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from pydantic import Field


def import_callable(spec: str) -> Callable[..., Any]:
    """The function a "package.module:function" setting names (importing its module)."""
    module, _, name = spec.partition(":")
    if not module or not name:
        raise ValueError(f"{spec!r}: expected 'package.module:function'")
    try:
        found: object = getattr(importlib.import_module(module), name)
    except Exception as exc:  # noqa: BLE001 - the module is the user's: whatever it raises, the setting is unusable
        raise ValueError(f"{spec!r} cannot be loaded: {type(exc).__name__}: {exc}") from None
    if not callable(found):
        raise ValueError(f"{spec!r} is a {type(found).__name__}, not a function")
    return found


def s3_uri(uri: str, what: str = "") -> str:
    """`uri` when it names a bucket: s3://bucket or s3://bucket/prefix (`what`: the key, for a message that
    would not otherwise name it)."""
    if not uri.startswith("s3://") or len(uri) <= 5 or uri[5] == "/":
        raise ValueError(f"{what + ' ' if what else ''}{uri!r} must look like s3://bucket/prefix")
    return uri


def template(value: str, fields: tuple[str, ...]) -> str:
    """`value` when it formats (str.format) with the named `fields` alone, as it will for every document."""
    allowed = ", ".join("{" + f + "}" for f in fields)
    try:
        value.format(**dict.fromkeys(fields, "x"))
    except KeyError as exc:
        raise ValueError(f"{value!r}: unknown placeholder {{{exc.args[0]}}}; it may use {allowed}") from None
    except (ValueError, IndexError, AttributeError) as exc:
        raise ValueError(f"{value!r}: {exc}; it may use {allowed}") from None
    return value


def index_path(under_dir: str, description: str, default: str = "") -> Any:
    """A path setting whose default lives under [index] dir (schemas/paths.py): the field, its default
    (data/index/`under_dir`, or `default`) and what the configuration reference shows instead of it, named once."""
    return Field(
        default=default or f"data/index/{under_dir}",
        description=description,
        json_schema_extra={"shown_default": f"<[index] dir>/{under_dir}"},
    )
