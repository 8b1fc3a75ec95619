"""Text from documents and callers shown to a person (the CLI's lines, logs, run report lines, Prefect's panels)
with every control character escaped, so that a file name or a question cannot write to the operator's terminal:
`page\\x1b[2K\\x1b[1A\\rdata quality: passed.md` stays one line that says what it is, never an erased FAILED line
and a forged verdict (cron mail, CI logs and Rich output alike).

Escaped, as Python writes them (`\\x1b`, `\\n`, `\\u202e`): C0 controls and DEL, C1 controls, the line and paragraph
separators, the bidirectional overrides and isolates (which reorder what a terminal shows), and lone surrogates
(a file name that is not UTF-8, which a UTF-8 stream could not even write).
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def printable(text: object, keep: str = "") -> str:
    """`text` with every unsafe character escaped, except those in `keep` (a line printer keeps "\\n" that its
    own format put there; a value going into a line keeps nothing)."""

    def escaped(found: re.Match[str]) -> str:
        char = found.group()
        return char if char in keep else char.encode("unicode_escape").decode("ascii")

    return _UNSAFE.sub(escaped, str(text))
