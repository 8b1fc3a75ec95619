"""How a run shows its progress: decided once per process by whoever starts the run (the CLI), not passed
through every call: a bar at a terminal, a line every few seconds on stderr otherwise (cron, CI, a worker's
log), nothing under --quiet. The default is silence (a deployment's worker, a test, a library caller).

What it shows of a source: its documents to index as soon as its plan is known, then the texts the model embeds
with their rate and the time left (`Estimate`: the texts still to embed, those of the documents not yet chunked
counted at the source's texts per document so far, at the rate so far), and each batch of documents through."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Literal, Protocol


class Progress(Protocol):
    def update(self, source: str, done: int, total: int) -> None:
        """`done` of `total` documents of `source` are through (0: its plan is known, nothing done yet)."""

    def embedding(self, documents: int, done: int, total: int) -> None:
        """The model has embedded `done` of the `total` texts of a batch of `documents` documents (of the source
        last updated)."""

    def close(self) -> None:
        """The run ended."""


@dataclass
class Estimate:
    """The time left to embed one source's texts, from what its batches showed so far: the texts still to embed
    are the current batch's rest plus, for the documents not yet chunked, the source's texts per document so far;
    the rate is the texts embedded over the seconds since the model's first slice ended (that slice carries the
    model's load), or since its first text went to the model while there is no second slice."""

    documents: int  # the source's documents to index
    started: float | None = None
    warm_at: float | None = None  # when the first slice ended
    warm_texts: int = 0  # texts embedded by then
    done_documents: int = 0  # in batches the model finished
    done_texts: int = 0
    batch_documents: int = 0  # the batch the model is at
    batch_done: int = 0
    batch_total: int = 0

    def embedding(self, documents: int, done: int, total: int, now: float) -> None:
        """The model is at `done` of the `total` texts of a batch of `documents` documents."""
        if self.started is None:
            self.started = now
        if done == 0 or done < self.batch_done:  # a new batch: the one before it is finished
            self.done_documents += self.batch_documents
            self.done_texts += self.batch_total
            self.batch_documents, self.batch_total = documents, total
        self.batch_done = done
        if done > 0 and self.warm_at is None:
            self.warm_at, self.warm_texts = now, self.texts_done

    @property
    def texts_done(self) -> int:
        return self.done_texts + self.batch_done

    @property
    def texts_expected(self) -> float:
        seen_documents = self.done_documents + self.batch_documents
        seen_texts = self.done_texts + self.batch_total
        if seen_documents == 0:
            return 0.0
        return seen_texts + max(self.documents - seen_documents, 0) * seen_texts / seen_documents

    def rate(self, now: float) -> float:
        """Texts a second so far (0 before any)."""
        if self.warm_at is not None and self.texts_done > self.warm_texts and now > self.warm_at:
            return (self.texts_done - self.warm_texts) / (now - self.warm_at)
        if self.started is None or now <= self.started:
            return 0.0
        return self.texts_done / (now - self.started)

    def seconds_left(self, now: float) -> float | None:
        """At the rate so far, the seconds the source's remaining texts take (None before there is a rate)."""
        rate = self.rate(now)
        return max(self.texts_expected - self.texts_done, 0.0) / rate if rate > 0 else None


class Silent:
    def update(self, source: str, done: int, total: int) -> None:
        pass

    def embedding(self, documents: int, done: int, total: int) -> None:
        pass

    def close(self) -> None:
        pass


class Bar:
    """A progress bar on stderr (a terminal)."""

    def __init__(self) -> None:
        from tqdm import tqdm

        self._bar = tqdm(desc="documents", unit="doc", file=sys.stderr)
        self.source = ""
        self.estimate = Estimate(0)

    def update(self, source: str, done: int, total: int) -> None:
        if done == 0:
            self.source, self.estimate = source, Estimate(total)
        self._bar.set_description(source)
        self._bar.total = total
        self._bar.n = done
        self._bar.refresh()

    def embedding(self, documents: int, done: int, total: int) -> None:
        now = time.monotonic()
        self.estimate.embedding(documents, done, total, now)
        left = self.estimate.seconds_left(now)
        texts = f"{self.source}: {self.estimate.texts_done} texts embedded ({self.estimate.rate(now):.1f}/s"
        self._bar.set_description(texts + (f", about {left:.0f} s left)" if left is not None else ")"))
        self._bar.refresh()

    def close(self) -> None:
        self._bar.close()
        finished(self)


class Lines:
    """Where no one watches a bar: one line on stderr when a source's work is known (`0/N documents`, before
    anything of it is parsed or embedded), one per source's end, and at most one every `every` seconds in between,
    with the rate and the time left at that rate."""

    def __init__(self, every: float = 15.0) -> None:
        self.every = every
        self.started = self.last = time.monotonic()
        self.source = ""
        self.estimate = Estimate(0)
        self.told_texts = False  # of this source

    def update(self, source: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done == 0:  # the source's work, as soon as it is known (nothing to index: nothing to say)
            self.source, self.estimate, self.told_texts = source, Estimate(total), False
            if total:
                print(f"cairn: {source}: 0/{total} documents to index", file=sys.stderr, flush=True)
            return
        if done < total and now - self.last < self.every:
            return
        self.last = now
        rate = done / max(now - self.started, 1e-6)
        left = f", about {(total - done) / rate:.0f} s left" if done < total and rate > 0 else ""
        print(f"cairn: {source}: {done}/{total} documents ({rate:.1f}/s{left})", file=sys.stderr, flush=True)

    def embedding(self, documents: int, done: int, total: int) -> None:
        """A line on the first texts embedded of a source (its first rate), then at most one every `every` s."""
        now = time.monotonic()
        self.estimate.embedding(documents, done, total, now)
        if done == 0 or (self.told_texts and now - self.last < self.every):
            return
        self.told_texts, self.last = True, now
        estimate = self.estimate
        left = estimate.seconds_left(now)
        print(
            f"cairn: {self.source}: {estimate.texts_done} of about {estimate.texts_expected:.0f} texts embedded "
            f"({estimate.rate(now):.1f}/s" + (f", about {left:.0f} s left)" if left is not None else ")"),
            file=sys.stderr,
            flush=True,
        )

    def close(self) -> None:
        finished(self)


ProgressKind = Literal["bar", "lines", "off"]
_factory: type = Silent
_KINDS: dict[ProgressKind, type] = {"bar": Bar, "lines": Lines, "off": Silent}


def set_progress_display(kind: ProgressKind) -> None:
    """How the process's runs show progress from now on: a "bar", "lines" or nothing ("off")."""
    global _factory
    _factory = _KINDS[kind]


_current: Progress = Silent()


def start() -> Progress:
    """The progress display for a run that starts now (also told, by `embedding`, what the model embeds)."""
    global _current
    _current = _factory()
    return _current


def finished(display: Progress) -> None:
    """`display`'s run ended: what the model embeds after it is nobody's to show."""
    global _current
    if _current is display:
        _current = Silent()


def embedding(documents: int, done: int, total: int) -> None:
    """The model has embedded `done` of the `total` texts of a batch of `documents` documents: for the display of
    the run in progress (flows/steps.py Embedder)."""
    _current.embedding(documents, done, total)
