"""Step 1, the query-quality gate: a query must say enough to be searched, else the caller gets guidance.

Rule 9 counts words; a search box gets keywords ("pushgateway", "query log"). A question of fewer content words
than the rule asks for is still searched when one of its words is specific in the index asked (`judge`): few of
its passages hold it (BM25's document frequency), it names a service, or the words make up one of its headings.
The words are counted distinct: a long question repeating two words is judged on those two, not on its length.
The guidance's example is a heading of the caller's own index (query/specific.py reads it)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

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
    "The question is too vague to search reliably: none of its words is specific in this index. Name the "
    "service, the symptom or the error, or paste the alert name or ticket id."
)


def guidance(example: str = "") -> str:
    """The guidance a vague question gets; `example`: a heading of the caller's own index to model one on."""
    if not example:
        return GUIDANCE
    return GUIDANCE.replace("or the error,", f"or the error (as a heading here does: '{example}'),")


@dataclass
class GateVerdict:
    passed: bool
    terms: list[str]  # the query's content words (lower-case, stopwords dropped, each once)
    id_like: list[str]
    reason: str
    example: str = ""  # for a refusal: a heading of the caller's index (judge), else ""
    specific: list[str] = field(default_factory=list)  # the words judged specific in the index (judge)


@dataclass(frozen=True)
class TermUse:
    """How the index asked uses one word of a question: the passages (child rows) the caller can read that hold
    it, counted up to a cap (`capped`: at least that many), and whether it is the name of a service there."""

    term: str
    passages: int
    service: bool = False
    capped: bool = False

    def shown(self) -> str:
        return f"{self.passages}+" if self.capped else str(self.passages)


@dataclass(frozen=True)
class IndexEvidence:
    """What query/specific.py read of the index for a question the word count alone would refuse."""

    total: int  # passages the caller can read (0: not known)
    uses: list[TermUse] = field(default_factory=list)
    heading: str = ""  # a heading of the index made of exactly the question's words, if one is
    together: int = -1  # passages holding every word of the question (-1: not counted)
    example: str = ""  # a heading path of the caller's index, for the guidance


# In an index of a few pages a share is a passage or two: a word held by three passages or fewer is one topic's.
FEW_PASSAGES = 3


def is_specific(use: TermUse, total: int, share: float) -> bool:
    """A word held by at most `share` of the index's passages (or by FEW_PASSAGES), or a service's name. A word
    no passage holds is as specific as a word gets (a product name, a typo): it is searched, and the floors
    say whether anything answers it. A count that reached its cap is "at least the cap", never under the share:
    in an index of more than cap / share passages the share alone would call every word specific."""
    return use.service or (not use.capped and use.passages <= max(FEW_PASSAGES, share * total))


def content_terms(text: str) -> list[str]:
    """Lower-cased words that carry meaning: what the gate counts and gap alerts look for."""
    words = [w.strip(".-/:").lower() for w in _WORD.findall(text)]
    return list(dict.fromkeys(w for w in words if len(w) > 1 and w not in STOPWORDS))


def id_like_tokens(text: str) -> list[str]:
    """The words of `text` an ID-like pattern matches, each occurrence; each distinct word is matched once (a long
    question repeats its words)."""
    words = text.split()
    ids = {w for w in dict.fromkeys(words) if any(p.match(w.strip(".,;:()[]\"'")) for p in _ID_LIKE)}
    return [w.strip(".,;:") for w in words if w in ids]


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


def judge(
    text: str,
    min_terms: int,
    symptoms: bool = True,
    index: Callable[[list[str]], IndexEvidence] | None = None,
    share: float = 0.05,
) -> GateVerdict:
    """`gate`, and for a question it refuses, the index's word: searched when one of its words is specific there
    (is_specific) or its words are one of its headings; else refused, with an example from the caller's index.
    `index(terms)` reads the evidence (query/specific.py); None: the word count alone decides."""
    verdict = gate(text, min_terms, symptoms)
    if verdict.passed or index is None:
        return verdict
    evidence = index(verdict.terms)
    if evidence.heading:
        verdict.passed, verdict.reason = True, f"the words of the heading {evidence.heading!r}"
        return verdict
    verdict.specific = [u.term for u in evidence.uses if is_specific(u, evidence.total, share)]
    if not verdict.specific and len(evidence.uses) > 1 and evidence.together >= 0:
        joint = TermUse(" ".join(verdict.terms), evidence.together)
        if is_specific(joint, evidence.total, share):  # common words, rare together: "major incident"
            verdict.passed = True
            verdict.reason = f"its words together ({evidence.together} of {evidence.total or '?'} passages)"
            return verdict
    if verdict.specific:
        term = next(u for u in evidence.uses if u.term == verdict.specific[0])
        what = "a service name" if term.service else f"in {term.shown()} of {evidence.total or '?'} passages"
        verdict.passed, verdict.reason = True, f"the specific word {term.term!r} ({what})"
        return verdict
    verdict.example = evidence.example
    if verdict.terms:
        counts = ", ".join(f"{u.term!r} in {u.shown()}" for u in evidence.uses)
        verdict.reason = (
            f"{len(verdict.terms)} distinct content word(s), none specific in this index ({counts} of "
            f"{evidence.total or '?'} passages) and no ID-like token"
        )
    return verdict
