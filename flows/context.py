"""What a run holds open: the index (`OpenIndex`: the store, the cursors, the writer slot; what its first step, the
unchanged check of flows/noop.py, reads), then, when there is work, the steps (bound once to the encoder, the
embedding cache and the store), the task runner and the progress display (`RunContext`). Opened once per run,
closed whatever happens. The writer slot is taken in turns, around what writes (`writing`), never while a
source lists (flows/concurrency.py WriterSlot)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, fields, replace
from pathlib import Path

from cairn.embedding import encoder_for
from cairn.errors import CairnError, SourceError, StorageError, storage_reason
from cairn.flows import progress as progress_display
from cairn.flows.concurrency import WriterSlot
from cairn.flows.options import RunOptions
from cairn.flows.progress import Progress
from cairn.flows.steps import IngestSteps, StepRunner
from cairn.index.cache import EmbeddingCache
from cairn.index.derived import DerivedLedger
from cairn.index.generations import Generations, Target
from cairn.index.milvus import Connection
from cairn.index.protocol import IndexStore
from cairn.index.state import SourceState
from cairn.index.store import MilvusStore
from cairn.schemas.config import CairnConfig
from cairn.schemas.run_report import IndexReport


def storage_error(config: CairnConfig, exc: BaseException, reason: str) -> StorageError:
    """A write of the index or of Cairn's files that the storage refused (`reason`), said once, with where and what
    to do."""
    places = [config.milvus.uri] if config.milvus.is_lite else []
    places += [config.state_path, config.embedding.cache_path, str(config.ledger_folder)]
    folders = ", ".join(dict.fromkeys(str(Path(place).resolve().parent) for place in places))
    detail = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
    return StorageError(
        f"cannot write the index or Cairn's files beside it (in {folders}): {reason} ({detail}). What was written "
        "is kept: make room, or make the folder writable, then run the command again; `cairn reconcile` checks "
        "the index against the sources"
    )


@contextmanager
def storage_errors(config: CairnConfig) -> Iterator[None]:
    """A write the storage refuses (a full disk, a read-only folder) inside the block as one StorageError."""
    try:
        yield
    except CairnError:
        raise
    except Exception as exc:
        reason = storage_reason(exc)
        if reason is None:
            raise
        raise storage_error(config, exc, reason) from None


@dataclass
class OpenIndex:
    """The index as a run holds it open: the store it writes, the cursors, and where it writes, set up in the run's
    first turn with the writer slot. Opened one way for the whole run: its first step (the unchanged check,
    flows/noop.py) and its syncs (RunContext)."""

    config: CairnConfig
    options: RunOptions
    store: IndexStore
    state: SourceState
    # where this run writes: the serving generation, or the next one built beside it; None for a store without
    # generations (InMemoryStore: a unit test's run), which has nothing to publish or switch
    generations: Generations | None = None
    target: Target | None = None
    slot: WriterSlot | None = None  # None: a store no other run writes (InMemoryStore)

    @classmethod
    @contextmanager
    def open(cls, config: CairnConfig, options: RunOptions) -> Iterator[OpenIndex]:
        """Set the index up for writing in the run's first turn with the writer slot (IndexBusy when another run
        keeps it past `options.wait_seconds`): the generation it writes, the collection, the alias; close it all
        after."""
        with ExitStack() as stack:
            encoder = encoder_for(config.embedding)  # its identity and dimension: the weights are not loaded
            slot = WriterSlot(config.milvus, options.wait_seconds)
            with storage_errors(config), slot.held():  # the setup writes: generations, the collection, the alias
                connection = stack.enter_context(Connection.open(config.milvus, create=True))
                generations = Generations(connection.client, config.milvus)
                # the serving generation, or the next one built beside it when the encoder or schema changed
                target = generations.target(encoder.identity, encoder.dim)
                derived = stack.enter_context(DerivedLedger.open(config.ledger_folder, target.milvus))
                store = MilvusStore(target.milvus, encoder.dim, connection, derived)
                state = SourceState(config.state_path, config.milvus.identity, target.state_scope)
                stack.callback(state.close)
                for dropped in generations.dropped:
                    state.forget(dropped)
                    DerivedLedger.remove(config.ledger_folder, generations.physical(dropped))
                store.ensure_collection(embedder=encoder.identity)
                generations.publish(target)
            yield cls(config, options, store, state, generations, target, slot)

    @property
    def settled(self) -> bool:
        """Whether the run writes the generation that serves, which existed before it: no new index, no rebuild."""
        return self.target is not None and not self.target.rebuilding and not self.target.publish

    @contextmanager
    def writing(self) -> Iterator[None]:
        """A turn with the writer slot, for what writes or must not change under it (a source's ledger, then its
        plan and writes). The generation this run writes is checked again first: another run may have switched
        the index meanwhile (SourceError: this source is left for the next run)."""
        if self.slot is None:
            yield
            return
        with self.slot.held():
            self._check_target()
            yield

    def unconfigured_sources(self) -> list[str]:
        """Sources with rows in the collection written that the configuration does not name (they still answer
        queries): from the derived ledger's index of sources, when it is in step (else none named this run)."""
        derived, mark = getattr(self.store, "derived", None), self.store.mark()
        if not isinstance(derived, DerivedLedger) or mark is None or not derived.in_step(mark):
            return []
        return sorted(derived.sources() - {s.name for s in self.config.sources})

    def _turn(self) -> AbstractContextManager[None]:
        """A turn with the writer slot, the generation not checked (the run's own bookkeeping of a build)."""
        return self.slot.held() if self.slot is not None else nullcontext()

    def _check_target(self) -> None:
        if self.generations is None or self.target is None:
            return
        expected = self.target.serving if self.target.rebuilding else self.target.collection
        serving, _ = self.generations.serving_collection()
        if serving != expected:
            raise SourceError(
                f"the index {self.config.milvus.collection!r} changed under this run (it serves {serving!r} now, "
                f"not {expected!r}: another run switched it): not written this run; the next run writes it"
            )


@dataclass(kw_only=True)
class RunContext(OpenIndex):
    """What a run holds open while it syncs its sources: the open index, and the steps (bound once to the encoder,
    the embedding cache and the store), the task runner and the progress display."""

    steps: IngestSteps
    progress: Progress

    @classmethod
    @contextmanager
    def around(cls, index: OpenIndex, runner: StepRunner) -> Iterator[RunContext]:
        """The run's steps over `index`, the task runner started; every step call goes through `runner`
        (flows/run.py RunHost). The encoder's weights load when something must be embedded."""
        with ExitStack() as stack:
            encoder = encoder_for(index.config.embedding)  # the one OpenIndex.open read (load_encoder is cached)
            config = index.config
            if config.runner.kind == "dask":  # texts to embed go to the workers (flows/dask_runner.py)
                from cairn.flows.dask_runner import RunnerEncoder, runner_for_run

                workers = stack.enter_context(runner_for_run(config.runner))
                encoder = RunnerEncoder.around(encoder, workers, config.runner.workers)
            with storage_errors(config):
                cache = EmbeddingCache(config.embedding.cache_path, encoder.dim)
            stack.callback(cache.close)
            display = progress_display.start()
            stack.callback(display.close)
            steps = IngestSteps.bind(config, encoder, cache, index.store, runner)
            opened = {f.name: getattr(index, f.name) for f in fields(OpenIndex)}
            yield cls(**opened, steps=steps, progress=display)

    def source_done(self, name: str, ok: bool) -> None:
        """A source finished: into a generation being built, it counts towards the switch."""
        if ok and self.target is not None and self.generations is not None and self.target.rebuilding:
            with self._turn():
                self.generations.mark_built(self.target.collection, name)

    def conclude(self) -> IndexReport | None:
        """After every selected source ran: a build that now holds every configured source starts serving
        (flows/ingest.py); what the run report says about the index (None: a store without generations)."""
        target = self.target
        if target is None or self.generations is None:
            return None
        info = IndexReport(target.collection, target.serving or target.collection)
        if not target.rebuilding:
            return info
        info.rebuild = target.rebuild_reason
        with self._turn():
            if self.generations.serving_collection()[0] == target.collection:  # another run's switch, meanwhile
                return replace(info, switch="done", serving=target.collection, dropped=None)
            waiting = sorted({s.name for s in self.config.sources} - self.generations.built(target.collection))
            if waiting:
                return replace(info, switch="pending", waiting_for=waiting)
            dropped = self.generations.switch(target)
            self.state.adopt(target.collection)
        if dropped is not None:
            DerivedLedger.remove(self.config.ledger_folder, self.generations.physical(dropped))
        return replace(info, switch="done", serving=target.collection, dropped=dropped)
