"""`cairn drop --source NAME`: remove one source's rows from the index, configured or not (a source taken out of
the configuration keeps answering queries until it is dropped), and forget its cursors, version memo and outcomes.

    from cairn.flows.drop import drop_source
    dropped = drop_source(config, "globex-wiki")   # -> Dropped(documents=..., rows=...)

Rows go by primary key, read with one filtered pass over the collection (a command run by hand, never on a run's
path), under the writer slot; the derived ledger is brought in step first and kept in step (index/derived.py).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from cairn.errors import UsageError
from cairn.flows.concurrency import index_writer
from cairn.index.derived import DerivedLedger
from cairn.index.generations import open_serving
from cairn.index.holdings import SourceHolding, holdings
from cairn.index.state import SourceState
from cairn.index.store import MilvusStore
from cairn.schemas.collection import quote
from cairn.schemas.config import CairnConfig


@dataclass
class Dropped:
    source: str
    configured: bool  # still in the configuration: the next ingest indexes it again
    documents: int  # with a current version
    history_versions: int
    rows: int  # every row removed, current and history

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def held_by(config: CairnConfig, name: str, wait_seconds: float = 0.0) -> SourceHolding:
    """What the index holds of source `name` (UsageError when it holds nothing of it, naming what it holds)."""
    with index_writer(config.milvus, wait_seconds), open_serving(config.milvus) as reader:
        with DerivedLedger.open(config.ledger_folder, reader.config) as derived:
            MilvusStore(reader.config, _dim(config), reader.connection, derived).bring_in_step()
            return _holding(config, derived, name)


def _holding(config: CairnConfig, derived: DerivedLedger, name: str) -> SourceHolding:
    found = {h.source: h for h in holdings(derived.tally(), {s.name: "" for s in config.sources})}
    if name not in found:
        present = ", ".join(sorted(found)) or "none"
        raise UsageError(f"the index holds no rows of a source named {name!r} (sources in it: {present})")
    return found[name]


def drop_source(config: CairnConfig, name: str, wait_seconds: float = 0.0) -> Dropped:
    """Remove every row of source `name` (current and history) from the serving collection, by primary key, and
    what the state file keeps for it; what was removed. UsageError when the index holds nothing of it."""
    with index_writer(config.milvus, wait_seconds), open_serving(config.milvus) as reader:
        with DerivedLedger.open(config.ledger_folder, reader.config) as derived:
            store = MilvusStore(reader.config, _dim(config), reader.connection, derived)
            store.bring_in_step()
            held = _holding(config, derived, name)
            ids = [row.chunk_id for row in reader.iterate(f"source_name == {quote(name)}", ["chunk_id"])]
            store.delete_chunks(ids)
            store.flush()
        state = SourceState(config.state_path, config.milvus.identity)
        try:
            state.drop_source(name)
        finally:
            state.close()
    return Dropped(name, held.configured, held.documents, held.history_versions, len(ids))


def _dim(config: CairnConfig) -> int:
    """The model's dimension (what a rebuilt derived ledger checks rows' vectors against); no weights loaded."""
    from cairn.embedding import encoder_for

    return encoder_for(config.embedding).dim
