"""PagerDuty REST API v2, read-only: the incidents, their log entries, notes and alerts.

Token auth (`Authorization: Token token=...`); offset/limit pagination following `more`, up to PagerDuty's own
end of offset pagination (MAX_OFFSET: an API that says `more` past it is refused, not followed for ever); HTTP 429
honours Retry-After; 5xx, timeouts and truncated bodies are retried with capped exponential backoff. `timeout`
bounds each attempt as a whole, from connecting to its headers and the last byte of its body, not only each socket
read (sources/httpget.py: a server dripping a byte a second held an ingest for minutes). The token is held only
in the request header: it never appears in a log line, an exception or a report.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass

from cairn.errors import SourceError
from cairn.sources import httpget

MAX_OFFSET = 10_000  # PagerDuty's classic pagination ends here: offset + limit may not pass it


class ApiError(SourceError):
    """A request that failed for good; `status` is the HTTP status (0 for network errors)."""

    def __init__(self, path: str, status: int, reason: str) -> None:
        super().__init__(f"GET {path}: {reason}")
        self.path = path
        self.status = status
        self.reason = reason


class ListingTooLarge(ApiError):
    """A paginated listing whose answers passed what the source may hold (`limit` bytes, the setting `cap`)."""

    def __init__(self, path: str, cap: str, limit: int) -> None:
        super().__init__(
            path,
            200,
            f"the answers of this listing passed the source's {cap} ({limit:,} bytes): stopped (narrow the source "
            f"with since/until or statuses, or raise {cap})",
        )
        self.limit = limit


@dataclass
class RetryPolicy:
    attempts: int = 5
    base_seconds: float = 0.5
    cap_seconds: float = 8.0

    def delay(self, attempt: int) -> float:
        return min(self.cap_seconds, self.base_seconds * (2**attempt))


class PagerDutyApi:
    def __init__(
        self, base_url: str, token: str, page_size: int = 100, timeout: float = 30.0, retry: RetryPolicy | None = None
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._token = token
        self.page_size = page_size
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.requests_made = 0

    def __repr__(self) -> str:  # never show the token
        return f"PagerDutyApi({self.base_url!r})"

    def get(self, path: str, params: dict | None = None, max_bytes: int | None = None) -> dict:
        """The JSON object at `path`; ApiError when it fails for good, or (not retried) when its body is over
        `max_bytes` (refused as it is read, never held whole)."""
        try:
            return self.fetch(path, params, max_bytes)[0]
        except httpget.TooLarge as exc:
            raise ApiError(path, 200, f"the answer is over {exc.limit:,} bytes") from None

    def fetch(self, path: str, params: dict | None = None, max_bytes: int | None = None) -> tuple[dict, int]:
        """`get`'s object and the size of the body it came in; httpget.TooLarge past `max_bytes`."""
        query = urllib.parse.urlencode(
            [(k, v) for k, values in (params or {}).items() for v in (values if isinstance(values, list) else [values])]
        )
        url = f"{self.base_url}{path}" + (f"?{query}" if query else "")
        request = urllib.request.Request(url, headers={"Accept": "application/vnd.pagerduty+json;version=2"})
        # Unredirected: urllib copies ordinary headers onto a redirected request, to whatever host it names;
        # the token must only ever reach the configured API.
        request.add_unredirected_header("Authorization", f"Token token={self._token}")
        last = "no attempt made"
        for attempt in range(self.retry.attempts):
            self.requests_made += 1
            try:
                body = httpget.get(request, self.timeout, max_bytes)
                try:
                    data = json.loads(body)
                except ValueError:
                    last = f"truncated or invalid JSON body ({len(body)} bytes)"
                    time.sleep(self.retry.delay(attempt))
                    continue
                if not isinstance(data, dict):
                    raise ApiError(path, 200, f"expected a JSON object, got {type(data).__name__}")
                return data, len(body)
            except urllib.error.HTTPError as exc:
                if exc.code == 429:
                    last = "rate limited (429)"
                    time.sleep(
                        _retry_after(exc.headers.get("Retry-After"), self.retry.delay(attempt), self.retry.cap_seconds)
                    )
                    continue
                if exc.code >= 500:
                    last = f"server error {exc.code}"
                    time.sleep(self.retry.delay(attempt))
                    continue
                if exc.code == 401:
                    raise ApiError(
                        path, 401, "401 Unauthorized: the API token was refused (check the variable named by token_env)"
                    ) from None
                raise ApiError(path, exc.code, f"HTTP {exc.code}") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                reason = getattr(exc, "reason", exc)
                last = f"network error: {reason}"
                time.sleep(self.retry.delay(attempt))
        raise ApiError(path, 0, f"gave up after {self.retry.attempts} attempts ({last})")

    def pages(
        self, path: str, key: str, params: dict | None = None, max_bytes: int | None = None, cap: str = ""
    ) -> Iterator[dict]:
        """Every item of a paginated list endpoint, following `more` with offset/limit. `max_bytes`: what its
        answers may add up to (`cap` names the setting): ListingTooLarge past it, refused as it is read."""
        offset = received = 0
        while True:
            if offset + self.page_size > MAX_OFFSET:
                raise ApiError(
                    path,
                    200,
                    f"the API still said `more` after {offset:,} items, where PagerDuty's pagination ends: stopped"
                    " (narrow the source with since/until or statuses)",
                )
            params_now = {**(params or {}), "limit": self.page_size, "offset": offset}
            try:
                page, size = self.fetch(path, params_now, None if max_bytes is None else max_bytes - received)
            except httpget.TooLarge:
                assert max_bytes is not None  # fetch only refuses a body past a limit it was given
                raise ListingTooLarge(path, cap, max_bytes) from None
            received += size
            items = page.get(key)
            if not isinstance(items, list):
                raise ApiError(path, 200, f"response has no '{key}' list")
            yield from items
            if not page.get("more") or not items:
                return
            offset += len(items)


INCIDENT_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")  # PagerDuty object ids are letters and digits; - and _ are harmless


def checked_id(incident_id: object) -> str:
    """An incident id fit to become a path segment or a URL segment; ValueError naming it otherwise."""
    if not isinstance(incident_id, str) or not INCIDENT_ID.fullmatch(incident_id):
        shown = incident_id if isinstance(incident_id, str) else type(incident_id).__name__
        raise ValueError(f"incident id {str(shown)[:80]!r} is not a PagerDuty id (1-64 letters, digits, - or _)")
    return incident_id


def segment(value: str) -> str:
    """A URL path segment, every reserved character escaped."""
    return urllib.parse.quote(value, safe="")


def _retry_after(header: str | None, fallback: float, cap: float) -> float:
    try:
        return min(cap, max(0.0, float(header))) if header is not None else fallback
    except ValueError:
        return fallback
