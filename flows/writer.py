"""Writes one batch behind: batch i is written while batch i+1 is parsed and embedded.

The model keeps the CPU; a Milvus write mostly waits on Milvus. Writes stay in order, one at a time, in a
thread of their own. A document the index refused is counted failed when its batch is accounted for; a
write that failed as a whole (the store) is raised then, and stops the source.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from cairn.flows.steps import Written
from cairn.index.rows import ChunkedDocument
from cairn.schemas.run_report import SourceReport


@dataclass
class _Pending:
    future: Future
    documents: list[ChunkedDocument]
    computed: int  # embeddings the model computed for this batch


class BatchWriter:
    """Runs each batch's write in the writer thread and counts the batch once its write has landed."""

    def __init__(self, report: SourceReport, source_name: str) -> None:
        self.report = report
        self.source_name = source_name
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cairn-write")
        self._pending: _Pending | None = None

    def __enter__(self) -> BatchWriter:
        return self

    def __exit__(self, *exc_info) -> None:
        try:
            if exc_info[0] is None:
                self.drain()
        finally:
            self._pool.shutdown(wait=True)

    def submit(self, write: Callable[[], Written], documents: list[ChunkedDocument], computed: int) -> None:
        """Start this batch's write once the previous one is accounted for (its error, if any, raised here)."""
        self.drain()
        self._pending = _Pending(self._pool.submit(write), documents, computed)

    def drain(self) -> None:
        """Wait for the write in flight and count its batch as indexed."""
        pending, self._pending = self._pending, None
        if pending is None:
            return
        report, written = self.report, pending.future.result()
        landed = []
        for item in pending.documents:
            reason = written.refused.get(item.document.document_id)
            if reason is None:
                landed.append(item)
            else:
                report.fail(self.source_name, item.document.locator, reason)
        report.rows_written += written.rows
        report.embeddings_computed += pending.computed
        report.documents.indexed += len(landed)
        report.written_documents.setdefault(self.source_name, []).extend(d.document.document_id for d in landed)
        for item in landed:
            report.sections += len(item.sections)
            report.chunks += sum(len(s.chunks) for s in item.sections)
            report.tokens += sum(s.token_count for s in item.sections)
