"""One typed model per source type, chosen by `type`: every key a connector reads is declared here with its
default and what it means, and a key that is not (a typo such as `acls`) is refused when the file is loaded.

Identifiers (tenant, ACL groups, tags, the source name) are checked against the sizes the collection holds
(schemas/fields.py) at load time: nothing is ever clipped later.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from cairn.schemas.fields import ARRAY_FIELDS, ARRAY_ITEM_LENGTH, VARCHAR_FIELDS, acl_key
from cairn.schemas.records import Severity, parse_day
from cairn.schemas.values import index_path, s3_uri, template


def _fits(kind: str, value: str, limit: int) -> str:
    if not value.strip():
        raise ValueError(f"{kind} must not be empty")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValueError(f"{kind} {value!r} contains control characters")
    if len(value.encode("utf-8")) > limit:
        raise ValueError(
            f"{kind} {value[:40]!r}... is {len(value.encode('utf-8'))} bytes, over the {limit} the index holds"
        )
    return value


def _tenant(value: str) -> str:
    return _fits("tenant", value, VARCHAR_FIELDS["tenant_id"])


def _groups(values: list[str]) -> list[str]:
    for group in values:
        _fits("ACL group", group, ARRAY_ITEM_LENGTH)
    if len(set(values)) > ARRAY_FIELDS["access_control_list"]:
        raise ValueError(f"{len(set(values))} ACL groups, over the {ARRAY_FIELDS['access_control_list']} a row holds")
    if values and len(acl_key(values)) > VARCHAR_FIELDS["acl_key"]:
        raise ValueError(
            f"ACL groups too long to filter on ({len(acl_key(values))} bytes encoded, "
            f"limit {VARCHAR_FIELDS['acl_key']})"
        )
    return values


def _tags(values: list[str]) -> list[str]:
    for tag in values:
        _fits("tag", tag, ARRAY_ITEM_LENGTH)
    if len(values) > ARRAY_FIELDS["tags"]:
        raise ValueError(f"{len(values)} tags, over the {ARRAY_FIELDS['tags']} a row holds")
    return values


Tenant = Annotated[str, AfterValidator(_tenant)]
Groups = Annotated[list[str], AfterValidator(_groups)]
Tags = Annotated[list[str], AfterValidator(_tags)]


class _Strict(BaseModel):
    """A config table whose unknown keys (a typo) are refused; every config model of schemas/ derives from it."""

    model_config = ConfigDict(extra="forbid")


class SourceBase(_Strict):
    """Keys every source has."""

    name: str = Field(description="unique name of the source; its rows carry it (letters, digits, - or _)")
    tenant: Tenant = Field(description="the tenant its documents belong to (a document can never change it)")
    acl: Groups = Field(
        default_factory=list,
        description="default access control list: the groups that may read a document that declares none",
    )
    acl_ceiling: Groups | None = Field(
        default=None,
        description=(
            "the groups a document may grant itself in its own metadata (front matter): it may narrow to a subset, "
            "never go beyond (default: the acl above; with neither set, documents' own ACLs are taken as they are)"
        ),
    )
    batch_size: int = Field(
        default=32,
        ge=1,
        description=(
            "documents per parse/chunk/embed/write task: the model sorts a batch's texts by length, so more "
            "documents pad less (16 -> 32: ingest 5% faster on the shared runbooks); a batch's rows are what an "
            "ingest holds"
        ),
    )
    cleanup: Literal["incremental", "full", "none"] = Field(
        default="incremental",
        description=(
            "incremental: drop rows of documents the source no longer yields (when its discovery is complete); "
            "full: list everything (ignore the cursor) and drop whatever it did not yield; none: never drop"
        ),
    )
    max_delete_share: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description=(
            "a run that would remove more than this share of the source's indexed documents (of at least 10), or "
            "all of them, removes nothing and fails the source instead (an unmounted folder must not empty the index); "
            "`cairn ingest --allow-mass-delete` overrides it for one run"
        ),
    )
    keep_history: bool = Field(
        default=False,
        description=(
            "superseded versions keep their rows (temporal_end = when replaced), so `query --as-of` answers with "
            "what a document said then; a git source also loads its past versions (history_depth)"
        ),
    )
    listing_budget_seconds: float = Field(
        default=3600,
        gt=0,
        description=(
            "a source still listing its documents this long after its sync began (a stalled or endless API) fails, "
            "saying so, and the run goes on with the next source; indexing is not limited (a first ingest takes "
            "hours), each request, file and parse being bounded on its own"
        ),
    )
    max_documents: int = Field(
        default=1_000_000,
        ge=1,
        description=(
            "a source listing more documents than this fails, saying so, and the run goes on with the next source "
            "(discovery holds each listed document's id and version, a few hundred bytes each, until the source is "
            "indexed)"
        ),
    )
    quality_policy: Literal["warn", "fail"] = Field(
        default="warn",
        description=(
            "fail: the flow run fails after writing its data-quality report when this source fails an expectation"
        ),
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not value or not value.replace("-", "").replace("_", "").isalnum() or not value.isascii():
            raise ValueError(f"source name {value!r} must be letters, digits, - or _")
        return _fits("source name", value, VARCHAR_FIELDS["source_name"])


class _FilesSource(SourceBase):
    """A folder or an S3 prefix of files (sources/blobs.py)."""

    path: str | None = Field(default=None, description="a local folder (exactly one of path and uri)")
    uri: str | None = Field(
        default=None, description='an S3 prefix, "s3://bucket/prefix" (exactly one of path and uri)'
    )
    s3_endpoint_url: str | None = Field(default=None, description="overrides [s3] endpoint_url for this source")
    s3_region: str | None = Field(default=None, description="overrides [s3] region for this source")

    @model_validator(mode="after")
    def _one_location(self) -> _FilesSource:
        if bool(self.path) == bool(self.uri):
            raise ValueError('set exactly one of path = "folder" or uri = "s3://bucket/prefix"')
        if self.uri:
            s3_uri(self.uri, "uri")
        return self


class WikiSourceConfig(_FilesSource):
    """Markdown pages (.md, .markdown), front matter over these defaults (sources/wiki.py)."""

    type: Literal["wiki"]
    uri_base: str | None = Field(
        default=None, description="source_uri = uri_base + the page's path (else its file:// or s3:// URI)"
    )
    service: str = Field(
        default="", max_length=VARCHAR_FIELDS["service_name"], description="default service_name of its pages"
    )
    max_file_bytes: int = Field(
        default=5_000_000, ge=1, description="a larger page is refused by its listed size, unread"
    )
    link_template: str | None = Field(
        default=None,
        description=(
            "where a page is published, for deep links that click through: {path} (the page's path) and {anchor} "
            "(its heading's anchor as the site renders it), e.g. https://github.com/org/repo/blob/main/{path}#{anchor}"
            "; a page's front matter `url` overrides it"
        ),
    )
    anchor_style: Literal["github", "gitlab", "hugo"] = Field(
        default="github", description="how the site renders a heading's anchor (hugo: its default, GitHub's)"
    )

    @field_validator("link_template")
    @classmethod
    def _placeholders(cls, value: str | None) -> str | None:
        if value is None:
            return value
        named = set(re.findall(r"{([^{}]*)}", value))
        if "path" not in named or named - {"path", "anchor"}:
            raise ValueError(f"link_template takes {{path}} and optionally {{anchor}}, got {value!r}")
        return value


class PdfSourceConfig(_FilesSource):
    """Agreements and contracts as PDF files (sources/pdf.py)."""

    type: Literal["pdf"]
    tags: Tags = Field(default_factory=list, description="tags given to every agreement of the source")
    max_file_bytes: int = Field(
        default=100_000_000, ge=1, description="a larger PDF is refused by its listed size, unread"
    )
    max_pages: int = Field(
        default=2000, ge=1, description="a PDF with more pages is refused before parsing (its page count is read first)"
    )
    max_text_chars: int = Field(
        default=10_000_000, ge=1, description="a PDF whose text runs longer is refused (the parse stops there)"
    )
    parse_timeout_seconds: float = Field(
        default=300,
        gt=0,
        description=(
            "a PDF whose parse takes longer is refused: the parser runs in a worker process, killed at this limit"
        ),
    )
    parser: Literal["pdfium", "unstructured"] = Field(
        default="pdfium",
        description=(
            "pdfium: PDFium's text layer, blocks rebuilt from lines (a few ms per page); unstructured: its fast "
            "strategy, pdfminer's layout analysis (~50 ms per page), the parser of Cairn 0.3"
        ),
    )


class GitSourceConfig(SourceBase):
    """Files of a git repository at a ref, with their history (sources/git.py)."""

    type: Literal["git"]
    repo: str | None = Field(
        default=None,
        description=(
            "a local repository, a .bundle file or a clone URL (path or uri also accepted); an https://user:token@ "
            "URL's credentials reach git through its environment only, never the mirror's config, a command line or "
            "a message"
        ),
    )
    path: str | None = Field(default=None, description="same as repo, for a local repository")
    uri: str | None = Field(default=None, description="same as repo, for a clone URL")
    ref: str = Field(default="HEAD", description="the branch, tag or commit to index")
    include: list[str] = Field(
        default_factory=lambda: [
            "**/*.md",
            "**/*.markdown",
            "**/*.tf",
            "**/*.tfvars",
            "**/*.hcl",
            "**/*.yaml",
            "**/*.yml",
            "**/*.py",
            "**/*.sh",
            "**/*.go",
        ],
        description="globs of the files to index",
    )
    exclude: list[str] = Field(default_factory=list, description="globs of files to leave out")
    max_file_bytes: int = Field(default=1_000_000, ge=1, description="a larger file is refused with the reason")
    history_depth: int = Field(
        default=20,
        ge=0,
        description=(
            "keep_history: the first run also loads the past versions the last history_depth commits replaced, so "
            "as-of questions answer back to the oldest of them; later runs add those of the commits since; 0: none "
            "(`cairn backfill --commits N` loads them)"
        ),
    )
    cache_dir: str = index_path("git", "where the repository is mirrored (a folder per source)")
    timeout_seconds: float = Field(
        default=600,
        gt=0,
        description=(
            "per clone, fetch or ls-remote of the repository: git and its transport helpers are killed at this "
            "limit and the source fails, saying so"
        ),
    )
    service: str = Field(
        default="", max_length=VARCHAR_FIELDS["service_name"], description="default service_name of its files"
    )
    uri_template: str = Field(
        default="{repo}@{commit}/{path}",
        description="source_uri of a file, e.g. https://git.example/org/repo/blob/{commit}/{path}",
    )

    @field_validator("uri_template")
    @classmethod
    def _formats(cls, value: str) -> str:
        return template(value, ("repo", "commit", "path"))

    @model_validator(mode="after")
    def _a_repository(self) -> GitSourceConfig:
        if not (self.repo or self.path or self.uri):
            raise ValueError('a git source needs repo = "path, .bundle file or clone URL"')
        return self

    @property
    def repository(self) -> str:
        return str(self.repo or self.path or self.uri)


class AccessRule(_Strict):
    """Incidents of a team or service get this tenant and ACL (first match wins)."""

    team: str | None = Field(default=None, description="a team id or name")
    service: str | None = Field(default=None, description="a service id or name")
    tenant: Tenant | None = Field(default=None, description="their tenant (default: the source's)")
    acl: Groups | None = Field(default=None, description="their ACL (default: the source's)")

    @model_validator(mode="after")
    def _matches_something(self) -> AccessRule:
        if not (self.team or self.service):
            raise ValueError("an access rule needs team or service")
        return self


class PagerDutySourceConfig(SourceBase):
    """PagerDuty incidents from the REST API v2 or an export folder (sources/pagerduty/)."""

    type: Literal["pagerduty"]
    api_url: str | None = Field(
        default=None, description="the REST API base, e.g. https://api.pagerduty.com (exactly one of api_url and path)"
    )
    path: str | None = Field(default=None, description="an export folder shaped like the API's responses")
    token_env: str = Field(default="PAGERDUTY_TOKEN", description="the variable holding the API token (never the file)")
    statuses: list[str] = Field(default_factory=list, description="only incidents in these statuses (API)")
    service_ids: list[str] = Field(default_factory=list, description="only these services' incidents (API)")
    team_ids: list[str] = Field(default_factory=list, description="only these teams' incidents (API)")
    since: str | None = Field(default=None, description="only incidents since this ISO time (API)")
    until: str | None = Field(default=None, description="only incidents until this ISO time (API)")
    page_size: int = Field(default=100, ge=1, le=100, description="incidents per API page")
    concurrency: int = Field(default=3, ge=1, description="incidents fetched at once (log entries, notes, alerts)")
    overlap_minutes: float = Field(
        default=10, ge=0, description="the incremental window starts this long before the high-water mark"
    )
    timeout_seconds: float = Field(
        default=30, gt=0, description="per API request attempt, its whole body included (each attempt is retried)"
    )
    retry_attempts: int = Field(
        default=5, ge=1, description="attempts per API request (429 honours Retry-After; 5xx back off)"
    )
    retry_base_seconds: float = Field(default=0.5, ge=0, description="first backoff, doubled per attempt, capped")
    severity_map: dict[str, str] = Field(
        default_factory=dict, description="priority or urgency -> sev1..sev5 (over the defaults)"
    )
    access: list[AccessRule] = Field(default_factory=list, description="tenant and ACL per team or service")
    max_incident_bytes: int = Field(default=5_000_000, ge=1, description="a larger incident is refused, not held")
    max_listing_bytes: int = Field(
        default=100_000_000,
        ge=1,
        description=(
            "what a listing may receive from the API (or read from an export's incidents*.json files) in all: "
            "each incident listed is held until it is loaded; past it the source fails, saying so"
        ),
    )

    @field_validator("since", "until")
    @classmethod
    def _iso(cls, value: str | None) -> str | None:
        parse_day(value)  # sent to the API as written: refused here rather than by PagerDuty mid-run
        return value

    @field_validator("severity_map")
    @classmethod
    def _severities(cls, value: dict[str, str]) -> dict[str, str]:
        for key, severity in value.items():
            try:
                Severity.parse(severity)
            except ValueError as exc:
                raise ValueError(f"{key} = {severity!r}: {exc}") from None
        return value

    @model_validator(mode="after")
    def _one_origin(self) -> PagerDutySourceConfig:
        if bool(self.api_url) == bool(self.path):
            raise ValueError("a pagerduty source needs exactly one of api_url or path")
        return self


SourceConfig = Annotated[
    WikiSourceConfig | GitSourceConfig | PagerDutySourceConfig | PdfSourceConfig, Field(discriminator="type")
]
SOURCE_MODELS: dict[str, type[SourceBase]] = {
    "wiki": WikiSourceConfig,
    "git": GitSourceConfig,
    "pagerduty": PagerDutySourceConfig,
    "pdf": PdfSourceConfig,
}
