"""Step 1, the query-quality gate: a query must say enough to be searched, else the caller gets guidance."""

from __future__ import annotations

import re
from dataclasses import dataclass

# Negations ("not", "no") are not stopwords: "node is not ready" says something "node is ready" does not;
# nor are "up", "down", "out", "off": "ledger-db down" and "disk out of space" are operational facts.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing during each few for from further had has have having he her here
    hers him his how i if in into is it its itself just me more most my nor now of on once only or
    other our ours over own same she should so some such than that the their theirs them then there these
    they this those through to too under until very was we were what when where which while who whom why will
    with would you your yours please help need want know tell show get find""".split()
)
_WORD = re.compile(r"[\w][\w.\-@/:]*", re.UNICODE)
# Things a person pastes when they mean one precise object: a ticket, a file, an address, a host, an ID.
_ID_LIKE = [
    re.compile(r"^[A-Za-z][A-Za-z0-9]*-\d+$"),  # INC-1234, JIRA-42
    re.compile(r"^[\w\-]+\.(md|py|ya?ml|json|toml|tf|sh|go|js|ts|conf|cfg|ini|log|txt|pdf)$", re.I),
    re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$"),  # e-mail
    re.compile(r"^(?=.*[A-Za-z])[A-Za-z0-9\-]+(\.[A-Za-z0-9\-]+){2,}$"),  # host.name.tld
    re.compile(r"^(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9_\-]{6,}$"),  # mixed letters+digits: ids, hashes
    re.compile(r"^[A-Z][a-z]+(?:[A-Z][a-z0-9]+)+$"),  # CamelCase names (alerts, classes)
    re.compile(r"^[A-Z]{2,}[a-z]+(?:[A-Z][a-z0-9]*)*$"),  # OOMKilled, TLSHandshakeTimeout
    re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+$"),  # service and host names: ledger-db, edge_proxy, kube-apiserver
    re.compile(r"^E[A-Z]{3,}$"),  # errno names: ENOSPC, ECONNREFUSED
    re.compile(r"^[45]\d\d$"),  # HTTP error statuses: 502, 503
    re.compile(r"^[A-Z]{1,6}[-_]?\d{3,}$"),  # error codes: ORA-00600, E1234
    re.compile(r"^[\w.~\-]*/[\w.\-/]+$"),  # file paths: /var/log/syslog, runbooks/restart.md
]

# A defined term or proper name: two or more capitalised words ("the Determination Date", "Master Services
# Agreement"). Contracts define such terms precisely, so asking for one is as precise as pasting an ID.
_NAME = re.compile(r"\b[A-Z][\w\-]*(?:\s+(?:of|and|&)?\s*[A-Z][\w\-]*)+")

# A symptom names what is wrong: with one thing it is wrong with ("node unreachable", "ledger lagging") it is
# as precise as three plain words.
SYMPTOMS = frozenset(
    """down unreachable unavailable unhealthy degraded failing failed fails failure crashing crashed crashloop
    stuck hung hanging full slow latency timeout timeouts expired expiring expires leaking leak leaks oom
    lagging lag lags refused rejected dropped dropping throttled throttling evicted overloaded saturated
    flapping missing broken corrupt corrupted errors error erroring pending notready restarting""".split()
)

GUIDANCE = (
    "The question is too short to search reliably. Name the service, the symptom or the error, e.g. "
    "'ledger-db primary failover fails with replication lag' or paste the alert name or ticket id."
)


@dataclass
class GateVerdict:
    passed: bool
    terms: list[str]  # the query's content words (lower-case, stopwords dropped)
    id_like: list[str]
    reason: str


def content_terms(text: str) -> list[str]:
    """Lower-cased words that carry meaning: what the gate counts and gap alerts look for."""
    words = [w.strip(".-/:").lower() for w in _WORD.findall(text)]
    return list(dict.fromkeys(w for w in words if len(w) > 1 and w not in STOPWORDS))


def id_like_tokens(text: str) -> list[str]:
    return [w.strip(".,;:") for w in text.split() if any(p.match(w.strip(".,;:()[]\"'")) for p in _ID_LIKE)]


def named_terms(text: str) -> list[str]:
    """Capitalised multi-word names, not counting a sentence's capitalised first word ("What Is" is no name)."""
    names = []
    for match in _NAME.finditer(text):
        words = match.group(0).split()
        if match.start() == 0 or text[: match.start()].rstrip().endswith((".", "?", "!")):
            words = words[1:]  # the sentence's own capital
        words = [w for w in words if w.lower() not in STOPWORDS]
        if len(words) >= 2:
            names.append(" ".join(words))
    return names


def gate(text: str, min_terms: int, symptoms: bool = True) -> GateVerdict:
    """Rule 9: enough content words, or an ID-like token; with `symptoms`, one word fewer when one of them names
    what is wrong ("Node is unreachable")."""
    terms = content_terms(text)
    ids = id_like_tokens(text) + named_terms(text)
    if len(terms) >= min_terms:
        return GateVerdict(True, terms, ids, f"{len(terms)} content words")
    if ids:
        return GateVerdict(True, terms, ids, f"ID-like token {ids[0]!r}")
    named = [t for t in terms if t in SYMPTOMS] if symptoms else []
    if named and len(terms) >= max(2, min_terms - 1):
        return GateVerdict(True, terms, ids, f"the symptom {named[0]!r} and what it affects")
    return GateVerdict(False, terms, ids, f"{len(terms)} content word(s), fewer than {min_terms}, and no ID-like token")
