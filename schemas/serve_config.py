"""The `[serve]` table: `cairn serve`, the HTTP face of the query module (serve/ reads it), and who may call it.

A caller is known by its bearer key and nothing else: each `[[serve.principals]]` holds the SHA-256 of one key
(never the key itself), and the tenant and groups every answer to that key is scoped to. A request body never
names a tenant or a group.

    [[serve.principals]]
    name = "payments-bot"
    key_sha256 = "<hex sha256 of the key>"   # printf %s "$KEY" | sha256sum
    tenant = "acme"
    groups = ["sre"]
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from cairn.schemas.source_config import Groups, Tenant, _Strict

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
SHA256_HEX = re.compile(r"[0-9a-f]{64}")


class ServePrincipal(_Strict):
    """One caller of `cairn serve`: a key (by its hash), and the principal every answer to it is scoped to."""

    name: str = Field(description="who holds the key: logs and metrics name the caller by it, never by the key")
    key_sha256: str = Field(description='hex SHA-256 of the bearer key (`printf %s "$KEY" | sha256sum`)')
    tenant: Tenant = Field(description="the tenant every answer to this key is scoped to")
    groups: Groups = Field(min_length=1, description="the caller's groups: it reads rows whose ACL names one")
    rate_per_minute: int | None = Field(default=None, ge=0, description="this key's limit ([serve] rate_per_minute)")

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not NAME.fullmatch(value):
            raise ValueError(f"principal name {value!r}: 1-64 letters, digits, '.', '_' or '-', starting alphanumeric")
        return value

    @field_validator("key_sha256")
    @classmethod
    def _hash(cls, value: str) -> str:
        value = value.strip().lower()
        if not SHA256_HEX.fullmatch(value):
            raise ValueError("key_sha256 must be 64 hex digits, the SHA-256 of the key (never the key itself)")
        return value


class ServeConfig(_Strict):
    """`cairn serve` (serve/): where it listens, who may call it, and the limits every request is held to."""

    host: str = "127.0.0.1"  # the address to listen on (0.0.0.0 in a container, behind its network policy)
    port: int = Field(default=8080, ge=1, le=65535)  # the port to listen on
    workers: int = Field(default=1, ge=1, le=64)  # processes, each with its own Retriever (one query at a time each)
    principals: list[ServePrincipal] = Field(default_factory=list)  # the callers, by key hash (none: every call is 401)
    rate_per_minute: int = Field(default=600, ge=0)  # requests a key may make per minute, per worker; 0 = no limit
    max_k: int = Field(default=50, ge=1, le=200)  # the largest k a question may ask for (/v1/retrieve, /mcp, cairn mcp)
    max_query_chars: int = Field(default=2000, ge=16)  # a longer question is refused (422; a tool error over MCP)
    max_body_bytes: int = Field(default=65536, ge=1024)  # a larger request body is refused before it is parsed (413)
    timeout_seconds: float = Field(default=30.0, gt=0)  # a retrieval running longer answers 503 (cairn mcp too)
    feedback_path: str | None = None  # where /v1/feedback is kept (SQLite); None = feedback.sqlite beside state_path
    feedback_keep_days: float = Field(default=7.0, gt=0)  # answers can be marked, and count in the rates, this long

    @model_validator(mode="after")
    def _unique(self) -> ServeConfig:
        for what in ("name", "key_sha256"):
            values = [getattr(p, what) for p in self.principals]
            repeated = sorted({v for v in values if values.count(v) > 1})
            if repeated:
                shown = repeated if what == "name" else [f"{v[:8]}..." for v in repeated]
                raise ValueError(f"serve.principals: {what} must be unique; repeated: {', '.join(shown)}")
        return self
