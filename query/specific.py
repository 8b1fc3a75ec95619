"""What the gate asks of the index for a question of few words (query/gate.py judge): how many of the passages
the caller can read hold each word (one BM25 search per word, within the caller's access filter, counted up to a
cap), whether a word names a service or the words make up a heading there, and a heading path of the caller's
own index for the guidance's example. Runs only for a question the word count alone would refuse.

The count of readable passages is one scan of every row on Milvus Lite (3.4 s at 133k rows idle, 12 s under load:
bench/engine_profile.py), for a figure the judgement needs only the size of: each reader remembers it per filter
for COUNT_SECONDS, so a service asked short questions pays the scan once a minute per caller's filter, not per
question. A count that old is at most a minute of writes behind; it only places the share a word must stay under."""

from __future__ import annotations

import re
import threading
import time
import weakref
from collections.abc import Callable

from cairn.index.protocol import IndexReader
from cairn.query.gate import IndexEvidence, TermUse, content_terms
from cairn.schemas.row_filter import RowFilter
from cairn.schemas.rows import ChunkRow

FIELDS = ["chunk_id", "document_id", "title", "breadcrumbs", "service_name"]
COUNT_SECONDS = 60.0
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


class IndexTerms:
    """The evidence reader of one question: `reader` through the caller's filter `where` (tenant, ACL, time, scope),
    so the gate learns nothing of what the caller cannot read. `cap`: passages counted per word at most."""

    def __init__(
        self, reader: IndexReader, where: RowFilter, cap: int = 1000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.reader, self.where, self.cap, self.clock = reader, where, cap, clock

    def __call__(self, terms: list[str]) -> IndexEvidence:
        total = self.passages()
        uses, heading, example = [], "", ""
        holding: list[set[str]] = []  # per word, the passages holding it (complete only under the cap)
        for term in terms:
            rows = [hit.row for hit in self.reader.search_bm25(term, self.where, self.cap, FIELDS)]
            service = any(r.service_name.lower() == term for r in rows)
            uses.append(TermUse(term, len(rows), service, capped=len(rows) >= self.cap))
            holding.append({r.chunk_id for r in rows} if len(rows) < self.cap else set())
            heading = heading or matching_heading(terms, rows)
            example = example or (heading_path(rows[0]) if rows else "")
        complete = len(holding) > 1 and all(len(found) == use.passages for found, use in zip(holding, uses))
        together = len(set.intersection(*holding)) if complete else -1
        return IndexEvidence(total, uses, heading, together=together, example=example or self.any_heading())

    def passages(self) -> int:
        """The passages (child rows) the caller can read here, as counted within COUNT_SECONDS through this reader
        and filter; 0 when the store cannot count them (and nothing remembered)."""
        now = self.clock()
        known = _remembered(self.reader)
        if known is not None and (hit := known.get(self.where.expr)) and now - hit[0] < COUNT_SECONDS:
            return hit[1]
        try:
            total = self.reader.count(self.where)
        except Exception:  # noqa: BLE001 - a count is an aid to the judgement, never a reason to fail the query
            return 0
        if known is not None:
            with _LOCK:
                for expr in [e for e, (at, _) in known.items() if now - at >= COUNT_SECONDS]:
                    del known[expr]  # a caller's filter asked once is not kept for the reader's life
                known[self.where.expr] = (now, total)
        return total

    def any_heading(self) -> str:
        """A heading path of some passage the caller can read: the example when the question's words match none."""
        try:
            rows = self.reader.sample(self.where, 1, FIELDS)
        except Exception:  # noqa: BLE001 - the example is optional
            return ""
        return heading_path(rows[0]) if rows else ""


_COUNTS: weakref.WeakKeyDictionary[IndexReader, dict[str, tuple[float, int]]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def _remembered(reader: IndexReader) -> dict[str, tuple[float, int]] | None:
    """The counts remembered for `reader` (gone with it: a reloaded generation counts anew); None when the reader
    cannot be weakly referenced (nothing is remembered then)."""
    try:
        with _LOCK:
            return _COUNTS.setdefault(reader, {})
    except TypeError:
        return None


def matching_heading(terms: list[str], rows: list[ChunkRow]) -> str:
    """The first title or heading of `rows` whose content words are exactly the question's ("query log")."""
    wanted = set(terms)
    for row in rows:
        for label in [row.title, *row.breadcrumbs]:
            if wanted and set(content_terms(re.sub(r"[_\-]", " ", label))) == wanted:  # a file stem as title too
                return shown(label)
    return ""


def heading_path(row: ChunkRow) -> str:
    """`Title › heading` of a row, for a person to read: one line, no control characters, at most 100 characters."""
    crumbs = [c for c in row.breadcrumbs if c and c != row.title]
    parts = [row.title, *crumbs[-1:]]
    return shown(" › ".join(p for p in parts if p))


def shown(text: str) -> str:
    text = " ".join(_UNPRINTABLE.sub(" ", str(text)).split())
    return text if len(text) <= 100 else text[:97] + "..."
