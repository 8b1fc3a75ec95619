"""Credentials out of anything Cairn stores, shows or logs: a URL's user:password@ part is removed wherever it
appears in a text (a clone URL, a server URI, a tool's error message)."""

from __future__ import annotations

import re

_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)[^/@\s'\"<>]+@")


def redact(text: str) -> str:
    """The text with the credentials of every URL in it removed (`https://user:token@host/x` -> `https://host/x`)."""
    return _USERINFO.sub(r"\g<scheme>", text)
