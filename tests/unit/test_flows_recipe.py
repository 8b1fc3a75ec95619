"""The recipe is part of a document's version (schemas/recipe.py): rows record what made them, and a run re-chunks
exactly the documents another recipe made, embedding only texts the cache lacks. Run as tests/unit/test_flows_sync.py
runs a source: an InMemoryStore, the inline runner, a hashing encoder, a small wiki folder."""

from __future__ import annotations

from pathlib import Path

from cairn.flows.context import RunContext
from cairn.flows.options import RunOptions
from cairn.flows.progress import Silent
from cairn.flows.steps import IngestSteps, InlineRunner
from cairn.flows.sync import SourceSync
from cairn.index.cache import EmbeddingCache
from cairn.index.memory import InMemoryStore
from cairn.index.plan import OUTDATED_WHY
from cairn.index.state import SourceState
from cairn.schemas import ChunkType
from cairn.schemas.config import load_config
from cairn.schemas.recipe import recipe_changes, recipe_fingerprint, recipe_parts
from cairn.schemas.row_links import DocumentStamp
from cairn.schemas.run_report import SourceReport
from tests.conftest import write_config, write_page
from tests.encoders import HashingEncoder

SENTENCE = "Drain the {title} queue, restart worker number {n} and confirm that the lag falls below {n}00 messages. "
PAGES = ("alpha", "beta", "gamma")
WIKI = {"name": "wiki", "type": "wiki", "tenant": "acme", "acl": ["sre"]}
NARROW = {"child_min_tokens": 60, "child_target_tokens": 90, "child_max_tokens": 120}


def write_wiki(root: Path) -> None:
    for name in PAGES:
        body = f"# {name.title()}\n\n" + "".join(SENTENCE.format(title=name, n=n) for n in range(60))
        write_page(root, f"{name}.md", body)


def sync(tmp_path: Path, store: InMemoryStore, chunking: dict | None = None, **source) -> SourceReport:
    """One run of the wiki source into `store` under `chunking` ([chunking] keys) and the source options given."""
    settings = {"name": "wiki", "type": "wiki", "path": str(tmp_path / "wiki"), "tenant": "acme", "acl": ["sre"]}
    path = write_config(tmp_path / "c.toml", tmp_path / "index", [{**settings, **source}])
    if chunking:
        table = "\n".join(f"{key} = {value}" for key, value in chunking.items())
        path.write_text(path.read_text(encoding="utf-8") + f"[chunking]\n{table}\n", encoding="utf-8")
    config = load_config(path)
    encoder = HashingEncoder()
    cache, state = EmbeddingCache(config.embedding.cache_path, encoder.dim), SourceState(config.state_path)
    try:
        steps = IngestSteps.bind(config, encoder, cache, store, InlineRunner())
        run = RunContext(config, RunOptions(), store, state, steps=steps, progress=Silent())
        return SourceSync(run, config.sources[0]).sync()
    finally:
        cache.close()
        state.close()


def children(store: InMemoryStore) -> list[dict]:
    return [r for r in store.rows_by_id.values() if r.is_current and r.chunk_type == ChunkType.CHILD.value]


def test_a_narrower_chunking_band_rechunks_every_document_and_says_why(tmp_path):
    write_wiki(tmp_path / "wiki")
    store = InMemoryStore()
    first = sync(tmp_path, store)
    assert first.documents.indexed == 3
    assert max(r.token_count for r in children(store)) > 120  # the default band: children up to 200 tokens
    again = sync(tmp_path, store)
    assert (again.documents.unchanged, again.documents.indexed, again.reindexed) == (3, 0, {})

    narrowed = sync(tmp_path, store, NARROW)

    assert (narrowed.documents.indexed, narrowed.documents.unchanged) == (3, 0)
    assert narrowed.reindexed == {OUTDATED_WHY["recipe"]: 3}
    assert narrowed.recipe_changes == [
        "[chunking] child_max_tokens 200 -> 120",
        "[chunking] child_min_tokens 100 -> 60",
        "[chunking] child_target_tokens 150 -> 90",
    ]
    assert max(r.token_count for r in children(store)) <= 120  # no child of the old band is left
    current = {DocumentStamp.from_row(r).recipe for r in store.rows_by_id.values() if r.is_current}
    assert len(current) == 1 and "" not in current
    assert sync(tmp_path, store, NARROW).documents.unchanged == 3  # and the new recipe is then unchanged


def test_only_documents_another_recipe_made_are_rechunked(tmp_path):
    write_wiki(tmp_path / "wiki")
    store = InMemoryStore()
    sync(tmp_path, store)
    for row in store.rows_by_id.values():  # beta's rows as an older Cairn (or other settings) made them
        if row.title == "Beta":
            row.extra = {**row.extra, "recipe": "0123456789abcdef"}

    part = sync(tmp_path, store)

    assert (part.documents.indexed, part.documents.unchanged) == (1, 2)
    assert part.reindexed == {OUTDATED_WHY["recipe"]: 1}
    assert part.embeddings_computed == 0  # the same texts: every vector from the embedding cache
    assert part.written_documents["wiki"] == [r.document_id for r in store.rows_by_id.values() if r.title == "Beta"][:1]


def test_a_row_shaping_source_option_rechunks_its_documents_and_embeds_nothing_new(tmp_path):
    write_wiki(tmp_path / "wiki")
    store = InMemoryStore()
    sync(tmp_path, store)
    assert sync(tmp_path, store, batch_size=7).documents.unchanged == 3  # an option that shapes no row: nothing

    part = sync(tmp_path, store, service="payments")

    assert part.reindexed == {OUTDATED_WHY["recipe"]: 3}
    assert part.embeddings_computed == 0
    assert {r.service_name for r in store.rows_by_id.values() if r.is_current} == {"payments"}


def test_a_recipes_changes_are_named(tmp_path):
    config = load_config(write_config(tmp_path / "c.toml", tmp_path / "index", [WIKI | {"path": str(tmp_path / "w")}]))
    wiki = config.sources[0]
    narrowed = config.chunking.model_copy(update=NARROW)
    assert recipe_fingerprint(wiki, config.chunking) != recipe_fingerprint(wiki, narrowed)
    changes = recipe_changes(recipe_parts(wiki, config.chunking), recipe_parts(wiki, narrowed))
    assert "[chunking] child_min_tokens 100 -> 60" in changes
    assert len(changes) == 3


def test_two_sources_of_one_name_sharing_an_index_are_refused_and_delete_nothing(tmp_path):
    """Two configurations share an index, each with a source named `wiki` over its own folder: the second run is
    refused naming both, and removes none of the first one's documents (on main it deleted them, exit 0)."""
    write_wiki(tmp_path / "wiki")
    store = InMemoryStore()
    assert sync(tmp_path, store).documents.indexed == 3
    before = dict(store.rows_by_id)
    write_page(tmp_path / "other", "delta.md", "# Delta\n\n" + SENTENCE.format(title="delta", n=1) * 30)

    other = sync(tmp_path, store, path=str(tmp_path / "other"))

    assert store.rows_by_id == before  # nothing written, nothing removed
    (failure,) = other.failures
    assert "refused" in failure.error and str(tmp_path / "other") in failure.error
    assert str(tmp_path / "wiki") in failure.error and "cairn drop --source wiki" in failure.error
    assert sync(tmp_path, store).documents.unchanged == 3  # the owner's runs go on as before
