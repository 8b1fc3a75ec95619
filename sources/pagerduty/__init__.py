"""PagerDuty incidents as documents, from the REST API (`api_url`) or an export folder (`path`).

One document per incident. Export folder layout, shaped like the API's responses:

    incidents*.json              {"incidents": [...]}            (one or several pages)
    <incident id>/log_entries.json, notes.json, alerts.json      ({"log_entries": [...]} ...)

Incremental (API mode): the cursor keeps a high-water mark (latest change seen); the next run asks
`/log_entries` what changed since then minus `overlap_minutes` and fetches only those incidents, so its
discovery is not a complete listing (`complete = False`: nothing is cleaned up on such a run; `cairn
ingest --cleanup full` lists everything). Config keys, all optional but one of api_url / path:
api_url, token_env (default PAGERDUTY_TOKEN), statuses, service_ids, team_ids, since, until, page_size,
concurrency, overlap_minutes, timeout_seconds, retry_attempts, retry_base_seconds, severity_map,
max_incident_bytes (default 5,000,000: an export incident whose files are bigger is refused at discovery by
their sizes, without reading them; an API incident, as soon as one of its parts passes it while paging),
access = [{team | service, tenant, acl}] (first match wins; else the source's tenant and acl).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cairn.redact import redact
from cairn.schemas import TEMPORAL_OPEN, ContentType, DocumentRef, Environment, Severity, SourceDocument, SourceType
from cairn.schemas.source_config import PagerDutySourceConfig
from cairn.sources import httpget
from cairn.sources.base import Connector, DiscoveryFailure, DocumentError, SourceError
from cairn.sources.pagerduty.api import ApiError, ListingTooLarge, PagerDutyApi, RetryPolicy, checked_id, segment
from cairn.sources.pagerduty.render import incident_heading, render

DEFAULT_SEVERITY = {"P1": "sev1", "P2": "sev2", "P3": "sev3", "P4": "sev4", "P5": "sev5", "high": "sev2", "low": "sev4"}
PARTS = ("log_entries", "notes", "alerts")
VERSION_FIELDS = (
    "id",
    "incident_number",
    "title",
    "description",
    "status",
    "urgency",
    "priority",
    "service",
    "teams",
    "assignments",
    "updated_at",
    "last_status_change_at",
    "resolved_at",
    "incident_type",
    "custom_fields",
)
# fields the renderer walks: any other type is a malformed incident, refused naming the field
SHAPES = {"service": dict, "teams": list, "assignments": list, "custom_fields": list, "body": dict}


def parse_time(value, field: str, incident_id: str) -> int:
    if not isinstance(value, str) or not value:
        raise DocumentError(incident_id, f"'{field}' must be an ISO timestamp, got {value!r}")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise DocumentError(incident_id, f"'{field}' is not an ISO timestamp: {value!r}") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp())


class PagerDutySource(Connector[PagerDutySourceConfig]):
    kind = SourceType.PAGERDUTY
    no_acl_advice = "map its team or service in 'access', or set acl on the source"
    cursor_key = "high_water"  # the latest change seen (API mode)

    def __init__(self, config: PagerDutySourceConfig, cursor: dict | None = None) -> None:
        super().__init__(config, cursor)
        self.api_url = config.api_url or ""  # "": an export folder (the config has exactly one of the two)
        self.folder = Path(config.path) if config.path else None
        self.severity_map = {**DEFAULT_SEVERITY, **config.severity_map}
        self.max_bytes = config.max_incident_bytes
        self.incidents: dict[str, dict] = {}  # discovered incident objects, by id
        self.high_water = self.resumed_mark
        self.failed_changes: list[str] = []  # change times of incidents that could not be loaded this run
        self.api: PagerDutyApi | None = None
        if self.api_url:
            token_env = config.token_env
            token = os.environ.get(token_env, "")
            if not token:
                raise SourceError(f"source {self.name!r}: no PagerDuty token: set the variable {token_env}")
            self.api = PagerDutyApi(
                self.api_url,
                token,
                page_size=config.page_size,
                timeout=config.timeout_seconds,
                retry=RetryPolicy(config.retry_attempts, config.retry_base_seconds),
            )

    # ---- discovery ------------------------------------------------------------------------------
    def discover(self) -> Iterator[DocumentRef | DiscoveryFailure]:
        items = self._list_api(self.api) if self.api else self._list_export(self._export_folder())
        for position, (where, incident) in enumerate(items):
            incident_id = incident.get("id") if isinstance(incident, dict) else None
            if not isinstance(incident_id, str) or not incident_id:
                yield DiscoveryFailure(f"{where}[{position}]", "", "incident without a string 'id'")
                continue
            try:
                checked_id(incident_id)  # it becomes a folder name and a URL segment
            except ValueError as exc:
                yield DiscoveryFailure(f"{where}[{position}]", "", str(exc))
                continue
            too_big = self._oversized_export(incident_id)
            if too_big:
                yield self.failure(incident_id, too_big)
                continue
            self.incidents[incident_id] = incident
            for field in ("last_status_change_at", "updated_at"):
                value = incident.get(field)
                if isinstance(value, str) and (self.high_water is None or value > self.high_water):
                    self.high_water = value
            yield self.document_ref(incident_id, self._version(incident_id, incident))

    def _origin(self) -> str:
        """Where the incidents come from: the API's URL, or the export folder's file:// URI."""
        return self.api_url or self._export_folder().resolve().as_uri()

    def _export_folder(self) -> Path:
        assert self.folder is not None, "a source without an api_url has a path (the config model checks it)"
        return self.folder

    def _list_api(self, api: PagerDutyApi) -> Iterator[tuple[str, Any]]:
        """(where, incident) as the API gave them: discover() checks the shape."""
        filters = {
            "statuses[]": list(self.config.statuses),
            "service_ids[]": list(self.config.service_ids),
            "team_ids[]": list(self.config.team_ids),
        }
        since, until = self.config.since, self.config.until
        try:
            if self.resumed_mark:
                self.complete = False  # only what changed since the mark
                mark = datetime.fromisoformat(self.resumed_mark.replace("Z", "+00:00"))
                window = mark - timedelta(minutes=self.config.overlap_minutes)
                changed = []
                cap = self.config.max_listing_bytes
                for entry in api.pages(
                    "/log_entries",
                    "log_entries",
                    {"since": window.isoformat(), "is_overview": "true"},
                    max_bytes=cap,
                    cap="max_listing_bytes",
                ):
                    incident_id = (entry.get("incident") or {}).get("id") if isinstance(entry, dict) else None
                    if incident_id and incident_id not in changed:
                        changed.append(incident_id)
                for incident_id in changed:
                    try:
                        checked_id(incident_id)
                    except ValueError:
                        continue  # never put into a URL; the full listing of a later run reports it
                    incident, _ = api.fetch(f"/incidents/{segment(incident_id)}", max_bytes=self.max_bytes)
                    yield "/incidents", incident.get("incident")
                return
            self.complete = not (since or until or any(filters.values()))
            params: dict[str, str | list[str]] = {k: v for k, v in filters.items() if v}
            if since:
                params["since"] = since
            if until:
                params["until"] = until
            if not since and not until:
                params["date_range"] = "all"
            listing = api.pages(
                "/incidents", "incidents", params, max_bytes=self.config.max_listing_bytes, cap="max_listing_bytes"
            )
            for incident in listing:
                yield "/incidents", incident
        except httpget.TooLarge as exc:  # one incident of an incremental run
            raise SourceError(
                f"source {self.name!r}: PagerDuty API at {redact(self.api_url)}: an incident over the source's "
                f"max_incident_bytes ({exc.limit:,} bytes): stopped"
            ) from None
        except ApiError as exc:
            raise SourceError(
                f"source {self.name!r}: PagerDuty API at {redact(self.api_url)}: {redact(str(exc))}"
            ) from None

    def _list_export(self, folder: Path) -> Iterator[tuple[str, Any]]:
        """(file name, incident) as the export holds them: discover() checks the shape."""
        if not folder.is_dir():
            raise SourceError(f"source {self.name!r}: export folder {folder} does not exist")
        pages = sorted(folder.glob("incidents*.json"))
        if not pages:
            raise SourceError(f"source {self.name!r}: no incidents*.json in {folder}")
        held, cap = 0, self.config.max_listing_bytes
        for page in pages:
            held += page.stat().st_size
            if held > cap:
                raise SourceError(
                    f"source {self.name!r}: the export's incidents*.json files passed the source's max_listing_bytes "
                    f"({cap:,} bytes) at {page.name}: stopped (split the export into sources, or raise "
                    "max_listing_bytes)"
                )
            try:
                data = json.loads(page.read_text(encoding="utf-8"))
                incidents = data["incidents"]
                if not isinstance(incidents, list):
                    raise TypeError
            except (ValueError, KeyError, TypeError, UnicodeDecodeError):
                yield from [(page.name, {"id": None})]  # reported as a discovery failure naming the file
                continue
            for incident in incidents:
                yield page.name, incident

    def _oversized_export(self, incident_id: str) -> str | None:
        """Why an export incident is refused by the sizes of its files (never read), or None."""
        if self.folder is None:
            return None
        sizes: dict[str, int] = {}
        for part in PARTS:
            path = self.folder / incident_id / f"{part}.json"
            sizes[path.name] = path.stat().st_size if path.is_file() else 0
        total = sum(sizes.values())
        if total <= self.max_bytes:
            return None
        name, biggest = max(sizes.items(), key=lambda item: item[1])
        return (
            f"incident files are {total:,} bytes ({incident_id}/{name}: {biggest:,}), over the source's "
            f"max_incident_bytes ({self.max_bytes:,}); not read"
        )

    def _version(self, incident_id: str, incident: dict) -> str:
        material = {k: incident.get(k) for k in VERSION_FIELDS}
        if self.folder is not None:  # an export's notes and timeline can change without the incident
            for part in PARTS:
                path = self.folder / incident_id / f"{part}.json"
                material[part] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
        return hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()

    def next_mark(self) -> str | None:
        """The high-water mark to resume from: the latest change seen, but never past an incident that
        failed to load this run, so the next run's window reads it again (nothing is skipped for good)."""
        if not self.api or not self.high_water:
            return None
        return min([self.high_water, *self.failed_changes])

    # ---- loading --------------------------------------------------------------------------------
    def load(self, ref: DocumentRef) -> SourceDocument:
        incident = self.incidents.get(ref.locator)
        if incident is None:
            raise DocumentError(ref.locator, "incident was not discovered in this run")
        try:
            parts = self._parts_api(self.api, ref.locator) if self.api else self._parts_export(ref.locator)
            return self._document(ref, incident, *parts)
        except DocumentError:
            changed = incident.get("last_status_change_at") or incident.get("updated_at")
            if isinstance(changed, str):
                self.failed_changes.append(changed)
            raise

    def _parts_api(self, api: PagerDutyApi, incident_id: str) -> tuple[list, list, list]:
        def fetch(part: str) -> list:
            items, size = [], 0
            try:
                path = f"/incidents/{segment(incident_id)}/{part}"
                for item in api.pages(path, part, max_bytes=self.max_bytes, cap="max_incident_bytes"):
                    size += len(json.dumps(item, default=str))
                    if size > self.max_bytes:  # stop paging: the incident is refused, not held
                        raise DocumentError(
                            incident_id,
                            f"{part} are over the source's max_incident_bytes ({self.max_bytes:,}); "
                            "the rest was not fetched",
                        )
                    items.append(item)
            except ListingTooLarge:
                raise DocumentError(
                    incident_id, f"{part} are over the source's max_incident_bytes ({self.max_bytes:,}); not held"
                ) from None
            except ApiError as exc:
                raise DocumentError(incident_id, f"{part}: {exc.reason}") from None
            return items

        with ThreadPoolExecutor(max_workers=self.config.concurrency) as pool:
            log_entries, notes, alerts = pool.map(fetch, PARTS)
        return log_entries, notes, alerts

    def _parts_export(self, incident_id: str) -> tuple[list, list, list]:
        out: list[list[dict]] = []
        for part in PARTS:
            path = self._export_folder() / incident_id / f"{part}.json"
            if not path.is_file():
                out.append([])
                continue
            try:
                items = json.loads(path.read_text(encoding="utf-8"))[part]
                if not isinstance(items, list):
                    raise TypeError
            except (ValueError, KeyError, TypeError, UnicodeDecodeError):
                raise DocumentError(
                    incident_id, f'{incident_id}/{part}.json is not a {{"{part}": [...]}} response'
                ) from None
            out.append([i for i in items if isinstance(i, dict)])
        log_entries, notes, alerts = out
        return log_entries, notes, alerts

    def _document(
        self, ref: DocumentRef, incident: dict, log_entries: list, notes: list, alerts: list
    ) -> SourceDocument:
        incident_id = ref.locator
        title = incident.get("title") or incident.get("summary")
        if not isinstance(title, str) or not title.strip():
            raise DocumentError(incident_id, "incident has no 'title' string")
        if not isinstance(incident.get("service"), dict):
            raise DocumentError(incident_id, "incident has no 'service' object")
        for field, kind in SHAPES.items():
            value = incident.get(field)
            if value is not None and not isinstance(value, kind):
                wanted = "an object" if kind is dict else "a list"
                raise DocumentError(incident_id, f"'{field}' must be {wanted}, got {type(value).__name__}")
        log_entries, notes, alerts = ([i for i in part if isinstance(i, dict)] for part in (log_entries, notes, alerts))
        created = parse_time(incident.get("created_at"), "created_at", incident_id)
        changed_raw = incident.get("last_status_change_at") or incident.get("updated_at") or incident.get("created_at")
        changed = parse_time(changed_raw, "last_status_change_at", incident_id)
        resolved = [e.get("created_at") for e in log_entries if e.get("type") == "resolve_log_entry"]
        end = TEMPORAL_OPEN
        if resolved:
            end = max(parse_time(r, "resolve_log_entry.created_at", incident_id) for r in resolved)
        elif incident.get("status") == "resolved" and incident.get("resolved_at"):
            end = parse_time(incident.get("resolved_at"), "resolved_at", incident_id)
        service = str(incident["service"].get("summary") or incident["service"].get("id") or "")
        teams = [t for t in incident.get("teams") or [] if isinstance(t, dict)]
        grant = self.granted(incident_id, *self._access(service, incident["service"].get("id"), teams))
        tags = []
        if isinstance(incident.get("incident_type"), dict) and incident["incident_type"].get("name"):
            tags.append(str(incident["incident_type"]["name"]))
        environment = Environment.UNSPECIFIED
        for field in incident.get("custom_fields") or []:
            if isinstance(field, dict) and field.get("name") and field.get("value") not in (None, "", []):
                values = field["value"] if isinstance(field["value"], list) else [field["value"]]
                tags += [f"{field['name']}:{v}" for v in values]
                if field["name"] == "environment":
                    try:
                        environment = Environment.parse(str(values[0]))
                    except ValueError:
                        pass
        number = incident.get("incident_number")
        content = render(incident, log_entries, notes, alerts)
        size = len(content.encode("utf-8"))
        if size > self.max_bytes:
            raise DocumentError(
                incident_id,
                f"rendered incident is {size:,} bytes, over the source's max_incident_bytes ({self.max_bytes:,})",
            )
        return self.document(
            incident_id,
            ref.version_hash,
            grant,
            source_uri=str(incident.get("html_url") or f"{self._origin()}/incidents/{incident_id}"),
            title=f"[#{number}] {title}" if number is not None else title,
            content=content,
            content_type=ContentType.INCIDENT,
            created_at=created,
            updated_at=changed,
            temporal_start=created,
            temporal_end=end,
            service_name=service,
            environment=environment,
            severity=self._severity(incident),
            tags=tags,
            doc_tag=str(number) if number is not None else incident_id,
            extra={
                "incident_id": incident_id,
                "status": str(incident.get("status", "")),
                "heading": incident_heading(incident),
            },
        )

    def _severity(self, incident: dict) -> Severity:
        priority = incident.get("priority")
        if not isinstance(priority, dict):
            priority = {}
        for key in (priority.get("summary"), priority.get("name"), incident.get("urgency")):
            if key and key in self.severity_map:
                return Severity.parse(self.severity_map[key])
        return Severity.UNSPECIFIED

    def _access(self, service_name: str, service_id, teams: list[dict]) -> tuple[str, list[str]]:
        team_keys = {str(t.get(k)) for t in teams for k in ("id", "summary") if t.get(k)}
        for rule in self.config.access:
            if (rule.team and rule.team in team_keys) or (rule.service and rule.service in (service_name, service_id)):
                return rule.tenant or self.config.tenant, list(rule.acl if rule.acl is not None else self.config.acl)
        return self.config.tenant, list(self.config.acl)
