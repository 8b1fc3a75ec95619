"""One PagerDuty incident (the incident object with its log entries, notes and alerts) -> Markdown.

The incident layout is this rendering: a heading per part, so the shared Markdown chunker cuts a summary
section (the natural abstract source), the timeline in time order, the notes and the alerts, with
breadcrumbs service > incident > part. Each log entry, note and alert is its own paragraph, so a long
timeline is cut between entries, never inside one.
"""

from __future__ import annotations

import json

MAX_NOTE_CHARS = 20_000  # a pasted log in a note is cut here (and said so) to keep sections bounded


def _name(ref) -> str:
    return str(ref.get("summary") or ref.get("name") or ref.get("id") or "") if isinstance(ref, dict) else ""


def _when(value) -> str:
    return str(value or "").replace("T", " ").replace("Z", " UTC")


def _details(value, limit: int = 2000) -> str:
    if not value:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[:limit] + " [truncated]"


def incident_heading(incident: dict) -> str:
    return f"Incident #{incident.get('incident_number', '?')}: {incident.get('title') or incident.get('summary')}"


def render(incident: dict, log_entries: list[dict], notes: list[dict], alerts: list[dict]) -> str:
    service = _name(incident.get("service")) or "unknown service"
    lines = [f"# {service}", "", f"## {incident_heading(incident)}", "", "### Summary", ""]
    facts = [
        ("Status", incident.get("status")),
        ("Urgency", incident.get("urgency")),
        ("Priority", _name(incident.get("priority"))),
        ("Service", service),
        ("Created", _when(incident.get("created_at"))),
        ("Last status change", _when(incident.get("last_status_change_at"))),
        ("Resolved", _when(incident.get("resolved_at"))),
        (
            "Assigned to",
            ", ".join(_name(a.get("assignee")) for a in incident.get("assignments") or [] if isinstance(a, dict)),
        ),
        ("Teams", ", ".join(_name(t) for t in incident.get("teams") or [])),
        ("Escalation policy", _name(incident.get("escalation_policy"))),
        ("Incident type", _name(incident.get("incident_type"))),
        ("Resolve reason", _details(incident.get("resolve_reason"))),
    ]
    lines += [f"- **{label}:** {value}" for label, value in facts if value]
    description = incident.get("description") or (incident.get("body") or {}).get("details")
    if description and description != incident.get("title"):
        lines += ["", _details(description, MAX_NOTE_CHARS)]
    if log_entries:
        lines += ["", "### Timeline", ""]
        for entry in sorted(log_entries, key=lambda e: str(e.get("created_at", ""))):
            kind = str(entry.get("type", "")).removesuffix("_log_entry").replace("_", " ")
            agent = _name(entry.get("agent"))
            text = f"{_when(entry.get('created_at'))}: {kind}: {entry.get('summary', '')}"
            if agent:
                text += f" (by {agent})"
            detail = _details(
                (entry.get("event_details") or {}).get("description")
                if isinstance(entry.get("event_details"), dict)
                else ""
            )
            lines += [text + (f". {detail}" if detail else ""), ""]
    if notes:
        lines += ["", "### Notes", ""]
        for note in sorted(notes, key=lambda n: str(n.get("created_at", ""))):
            content = str(note.get("content", ""))
            if len(content) > MAX_NOTE_CHARS:
                content = content[:MAX_NOTE_CHARS] + f" [note truncated: {len(content):,} characters]"
            lines += [f"{_when(note.get('created_at'))}, {_name(note.get('user')) or 'someone'}: {content}", ""]
    if alerts:
        lines += ["", "### Alerts", ""]
        for alert in alerts:
            body = alert.get("body")
            detail = _details(body.get("details") if isinstance(body, dict) else None)
            lines += [
                f"[{alert.get('severity', 'unknown')}] {alert.get('summary', '')} ({alert.get('status', '')}, "
                f"{_when(alert.get('created_at'))})" + (f": {detail}" if detail else ""),
                "",
            ]
    return "\n".join(lines).rstrip() + "\n"
