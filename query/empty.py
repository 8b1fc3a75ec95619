"""Why a result is empty, said distinctly (the caller's next step differs for each): the question was too vague
(rephrase it); the principal can read nothing in this index (a wrong tenant or groups: fix who asks); it can
read sections, but none in this scope (doc_tag, filters, as_of: fix the scope); or sections were found and none
was relevant enough (the floors: the index has no answer). Telling the first two apart from the last costs one
existence query, run only when the search legs found nothing at all."""

from __future__ import annotations

from dataclasses import dataclass

from cairn.index.protocol import IndexReader
from cairn.query.filters import Filters, access_of
from cairn.query.gate import guidance
from cairn.schemas import ChunkType, Principal, from_epoch

TOO_VAGUE, NO_ACCESS, OUT_OF_SCOPE, BELOW_FLOORS = "too_vague", "no_access", "out_of_scope", "below_floors"
REASONS = (TOO_VAGUE, NO_ACCESS, OUT_OF_SCOPE, BELOW_FLOORS)
NO_RESULTS = "No relevant documents were found for this question in what you can access."


@dataclass(frozen=True)
class QuestionScope:
    """What narrowed the search besides who asks."""

    doc_tag: str | None = None
    filters: Filters | None = None
    as_of: int | None = None

    def parts(self) -> list[str]:
        said = []
        if self.doc_tag:
            said.append(f"doc_tag {self.doc_tag!r}")
        if self.filters:
            said.append("filters " + ", ".join(f"{k}={v!r}" for k, v in sorted(self.filters.items())))
        if self.as_of is not None:
            when = from_epoch(self.as_of)
            said.append(f"as_of {when.isoformat() if when else self.as_of}")
        return said


def message(
    reason: str, principal: Principal, scope: QuestionScope, best: float | None = None, example: str = ""
) -> str:
    """The sentence a caller shows for an empty result of this reason; `example`: for a vague question, a
    heading of the caller's own index (query/specific.py)."""
    who = f"tenant {principal.tenant!r} with groups {', '.join(principal.groups)}"
    if reason == TOO_VAGUE:
        return guidance(example)
    if reason == NO_ACCESS:
        return (
            f"Nothing in this index is readable by {who}: check the tenant and groups you ask as (and that a source "
            "granting them has been ingested)."
        )
    if reason == OUT_OF_SCOPE:
        return f"{who[0].upper()}{who[1:]} can read sections, but none match {' and '.join(scope.parts())}."
    if best is None:
        return NO_RESULTS
    return f"{NO_RESULTS} (The best match scored {best:.2f}, under the relevance floors.)"


def why_nothing_found(reader: IndexReader, principal: Principal, scope: QuestionScope, dense_on: bool) -> str:
    """The search legs found nothing at all: NO_ACCESS or OUT_OF_SCOPE (or BELOW_FLOORS when only the keyword
    leg ran and the principal can read sections: no term matched). A dense leg over the principal's rows without
    a scope always finds something, so then no query is needed."""
    if not scope.parts() and dense_on:
        return NO_ACCESS
    if not reader.any_row(access_of(principal, None).narrowed(chunk_type=ChunkType.CHILD.value)):
        return NO_ACCESS
    return OUT_OF_SCOPE if scope.parts() else BELOW_FLOORS
