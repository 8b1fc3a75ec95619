"""Who is calling: a bearer key, known by its SHA-256 only, mapped to the principal every answer is scoped to;
and how often each key may call (a token bucket per key, per worker process).

The key is hashed once and compared with every configured hash in constant time (hmac.compare_digest over the
whole list, no early exit), so neither the answer nor its timing says which hash came close. The key itself is
never stored, logged or echoed: an error names the principal, never the key.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import threading
import time
from dataclasses import dataclass

from cairn.schemas import Principal
from cairn.schemas.config import ServeConfig

MAX_KEY_CHARS = 512  # a longer credential (in bytes) is no key of ours: refused before it is hashed


@dataclass(frozen=True)
class Caller:
    """An authenticated caller: the configured name (for logs and metrics) and its principal."""

    name: str
    principal: Principal
    rate_per_minute: int  # 0 = no limit


class Keyring:
    """The configured callers, by key hash."""

    def __init__(self, config: ServeConfig) -> None:
        self.replace(config)

    def replace(self, config: ServeConfig) -> None:
        """Take the principals of `config` in place of the current ones, at once (one assignment: a request
        checked meanwhile sees either list whole). How a removed key is revoked without a restart (serve/reload.py)."""
        self._callers = [
            (
                bytes.fromhex(p.key_sha256),
                Caller(
                    p.name,
                    Principal(p.tenant, p.groups),
                    config.rate_per_minute if p.rate_per_minute is None else p.rate_per_minute,
                ),
            )
            for p in config.principals
        ]

    def __len__(self) -> int:
        return len(self._callers)

    def caller(self, authorization: bytes | str | None) -> Caller | None:
        """The caller an `Authorization: Bearer <key>` header names, or None (no header, another scheme, an
        unknown key). The key's bytes are hashed as they came (`printf %s "$KEY" | sha256sum` hashes the same)."""
        if not authorization:
            return None
        raw = authorization.encode("utf-8", "surrogatepass") if isinstance(authorization, str) else authorization
        scheme, _, key = raw.strip().partition(b" ")
        key = key.strip()
        if scheme.lower() != b"bearer" or not key or len(key) > MAX_KEY_CHARS:
            return None
        digest = hashlib.sha256(key).digest()
        found = None
        for known, caller in self._callers:  # every hash compared, whatever matched first (one list, read once)
            if hmac.compare_digest(digest, known):
                found = caller
        return found


class RateLimiter:
    """A token bucket per caller: `rate_per_minute` requests a minute, bursting up to that many."""

    def __init__(self) -> None:
        self._buckets: dict[str, tuple[float, float]] = {}  # name -> (tokens, when)
        self._lock = threading.Lock()

    def wait_seconds(self, caller: Caller, now: float | None = None) -> float:
        """0 when the call may proceed (a token is spent), else the seconds until the next token."""
        rate = caller.rate_per_minute
        if rate <= 0:
            return 0.0
        now = time.monotonic() if now is None else now
        with self._lock:
            tokens, when = self._buckets.get(caller.name, (float(rate), now))
            tokens = min(float(rate), tokens + (now - when) * rate / 60.0)
            if tokens >= 1.0:
                self._buckets[caller.name] = (tokens - 1.0, now)
                return 0.0
            self._buckets[caller.name] = (tokens, now)
            return (1.0 - tokens) * 60.0 / rate


def retry_after(seconds: float) -> str:
    """The Retry-After header's value: whole seconds, at least 1."""
    return str(max(1, math.ceil(seconds)))
