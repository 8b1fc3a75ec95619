"""Writes one batch behind: batch i is written while batch i+1 is parsed and embedded.

The model keeps the CPU; a Milvus write mostly waits on Milvus. Writes stay in order, one at a time, in a
thread of their own; a failed write is raised when its batch is accounted for, and stops the source.
"""
from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable

from cairn.index.rows import ChunkedDocument
from cairn.schemas.report import RunReport


@dataclass
class _Pending:
    future: Future
    documents: list[ChunkedDocument]
    computed: int  # embeddings the model computed for this batch


class BatchWriter:
    """Runs each batch's write in the writer thread and counts the batch once its write has landed."""

    def __init__(self, report: RunReport, source_name: str) -> None:
        self.report = report
        self.source_name = source_name
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cairn-write")
        self._pending: _Pending | None = None

    def __enter__(self) -> "BatchWriter":
        return self

    def __exit__(self, *exc_info) -> None:
        try:
            if exc_info[0] is None:
                self.drain()
        finally:
            self._pool.shutdown(wait=True)

    def submit(self, write: Callable[[], int], documents: list[ChunkedDocument], computed: int) -> None:
        """Start this batch's write once the previous one is accounted for (its error, if any, raised here)."""
        self.drain()
        self._pending = _Pending(self._pool.submit(write), documents, computed)

    def drain(self) -> None:
        """Wait for the write in flight and count its batch as indexed."""
        pending, self._pending = self._pending, None
        if pending is None:
            return
        report = self.report
        report.rows_written += pending.future.result()
        report.embeddings_computed += pending.computed
        report.documents.indexed += len(pending.documents)
        report.written_documents.setdefault(self.source_name, []).extend(d.document.document_id for d in pending.documents)
        for item in pending.documents:
            report.sections += len(item.sections)
            report.chunks += sum(len(s.chunks) for s in item.sections)
            report.tokens += sum(s.token_count for s in item.sections)
