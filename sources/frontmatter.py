"""YAML front matter of Markdown pages: split it off and type-check the keys Cairn reads."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

import yaml

from cairn.errors import CairnError
from cairn.schemas.source_config import GitSourceConfig, WikiSourceConfig

# A Markdown page's first-level heading: its title when the front matter names none (wiki pages, git runbooks).
H1 = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)

KNOWN_KEYS = {
    "title",
    "tenant",
    "acl",
    "service",
    "environment",
    "severity",
    "tags",
    "content_type",
    "doc_tag",
    "updated",
    "created",
    "valid_from",
    "valid_until",
}


class FrontMatterError(CairnError, ValueError):
    """Front matter that cannot be read; the wiki source reports it as the page's failure."""


class AccessRefused(FrontMatterError):
    """Front matter that the source's access policy refuses (a wider ACL, an empty one, another tenant): the
    page fails as refused by policy (cairn.errors.DocumentRefused)."""


# What a page of front matter only (a Hugo section's _index.md, an archetype) is skipped with: nothing to index.
FRONT_MATTER_ONLY = "front matter only: nothing to index"


def _split(text: str) -> tuple[str | None, str]:
    """(the front matter block, unparsed, or None; the body)."""
    if not text.startswith("---\n"):
        return None, text
    end = text.find("\n---", 4)
    while end != -1 and text[end + 4 : end + 5] not in ("\n", ""):
        end = text.find("\n---", end + 4)
    if end == -1:
        raise FrontMatterError("front matter opened with '---' is never closed")
    return text[4:end], text[end + 4 :].lstrip("\n")


def has_content(text: str) -> bool:
    """Whether a page holds anything besides its front matter, which is not parsed for this: a page of front
    matter only has nothing to index whatever that front matter says (a Hugo archetype's is a template)."""
    return bool(_split(text)[1].strip())


def split_front_matter(text: str) -> tuple[dict, str]:
    """(metadata, body). A page without a leading '---' line has no front matter."""
    block, body = _split(text)
    if block is None:
        return {}, text
    try:
        meta = yaml.safe_load(block) if block.strip() else {}
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"front matter is not valid YAML: {str(exc).splitlines()[0]}") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise FrontMatterError(f"front matter must be a mapping of keys, got {type(meta).__name__}")
    return meta, body


def string(meta: dict, key: str) -> str | None:
    value = meta.get(key)
    if value is None:
        return None
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return str(value).strip()
    raise FrontMatterError(f"front matter '{key}' must be a string, got {type(value).__name__}")


def string_list(meta: dict, key: str) -> list[str] | None:
    value = meta.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
        raise FrontMatterError(f"front matter '{key}' must be a list of strings")
    return [str(v).strip() for v in value if str(v).strip()]


def timestamp(meta: dict, key: str) -> int | None:
    value = meta.get(key)
    if value is None:
        return None
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise FrontMatterError(f"front matter '{key}' is not an ISO date: {value!r}") from None
    else:
        raise FrontMatterError(f"front matter '{key}' must be a date, got {type(value).__name__}")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp())


def narrowed_access(meta: dict, source: WikiSourceConfig | GitSourceConfig) -> tuple[str, list[str]]:
    """The tenant and ACL of a page whose front matter may narrow its source's, never widen them.

    A `tenant` other than the source's is refused (a page cannot move itself into another tenant); an `acl`
    must be a subset of the source's ceiling (`acl_ceiling`, else its default acl) when it has one (a page
    author cannot let more people read it); `acl: []` means nobody and is refused, never read as "the
    source's default"."""
    tenant, acl, ceiling = source.tenant, source.acl, source.acl_ceiling
    declared_tenant = string(meta, "tenant")
    if declared_tenant is not None and declared_tenant != tenant:
        raise AccessRefused(
            f"front matter tenant {declared_tenant!r} is not the source's tenant {tenant!r}: "
            "a page cannot move to another tenant"
        )
    if "acl" not in meta or meta["acl"] is None:
        return tenant, list(acl)
    declared = string_list(meta, "acl") or []
    if not declared:
        raise AccessRefused(
            "front matter acl is empty: nobody could read the page (remove the key to use the source's acl)"
        )
    ceiling = acl if ceiling is None else ceiling
    wider = sorted(set(declared) - set(ceiling)) if ceiling else []
    if wider:
        raise AccessRefused(
            f"front matter acl names groups the source does not grant: {', '.join(wider)} "
            "(a page may narrow its source's acl, never widen it; see acl_ceiling)"
        )
    return tenant, declared
