"""[runner] kind = "dask": the model work runs on Dask workers and the collection ends exactly as on threads."""

from __future__ import annotations

import asyncio
import pickle

from cairn.flows.dask_runner import configured
from cairn.flows.ingest import ingest_flow
from cairn.index.store import MilvusStore
from cairn.schemas.config import load_config
from tests.conftest import REPO, write_config

SAMPLE_WIKI = [  # the sample wiki sources of data/cairn.toml
    {
        "name": "runbooks",
        "type": "wiki",
        "path": str(REPO / "data/wiki/acme"),
        "tenant": "acme",
        "acl": ["sre"],
        "acl_ceiling": ["sre", "oncall", "payments", "platform", "security"],
    },  # as data/cairn.toml
    {
        "name": "globex-wiki",
        "type": "wiki",
        "path": str(REPO / "data/wiki/globex"),
        "tenant": "globex",
        "acl": ["globex-ops"],
        "acl_ceiling": ["globex-ops", "globex-sec"],
    },
]


def scratch_config(tmp_path, name: str, runner: str, sources=SAMPLE_WIKI):
    """Its own index and embedding cache, so each run computes every vector itself."""
    path = write_config(tmp_path / f"{name}.toml", tmp_path / name / "index", sources)
    path.write_text(path.read_text() + "[runner]\n" + runner)
    return path


def stored(config_path) -> dict[str, tuple[str, str, str]]:
    config = load_config(config_path)
    store = MilvusStore(config.milvus, dim=384)
    store.ensure_collection()
    try:
        return {
            r.chunk_id: (r.document_id, r.version_hash, r.chunk_type)
            for r in store.iterate("", ["chunk_id", "document_id", "version_hash", "chunk_type"])
        }
    finally:
        store.close()


def encode_task_states(flow_run_id: str) -> list[str]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId, TaskRunFilter, TaskRunFilterName

    async def read():
        async with get_client() as client:
            runs = await client.read_task_runs(
                flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id])),
                task_run_filter=TaskRunFilter(name=TaskRunFilterName(like_="encode-texts")),
            )
            return [r.state.type.value for r in runs]

    return asyncio.run(read())


def test_a_two_worker_local_cluster_writes_exactly_the_rows_of_the_thread_pool(tmp_path, prefect_server):
    # globex's five pages: enough texts for one slice per worker (two model batches), a quarter of the model time
    threads = scratch_config(tmp_path, "threads", 'kind = "thread"\n', [SAMPLE_WIKI[1]])
    dask = scratch_config(tmp_path, "dask", 'kind = "dask"\nworkers = 2\nprocesses = true\n', [SAMPLE_WIKI[1]])

    by_threads = ingest_flow(config_path=str(threads))
    # the CLI's way: the flow runs on the configured runner (ingest_flow.with_options(task_runner=DaskTaskRunner))
    by_dask = configured(ingest_flow, load_config(dask))(config_path=str(dask))

    assert by_dask["documents"] == by_threads["documents"]
    assert by_dask["documents"]["indexed"] == 5 and by_dask["documents"]["failed"] == 0
    assert by_dask["embeddings_computed"] == by_threads["embeddings_computed"] > 0
    rows = stored(dask)
    assert rows == stored(threads)  # the same chunk ids, documents, version hashes and row kinds
    assert len(rows) == by_dask["sections"] + by_dask["chunks"]
    # the vectors were computed by encode-texts tasks on the cluster, in slices (one per worker at least once)
    states = encode_task_states(by_dask["run_id"])
    assert len(states) >= 2 and set(states) == {"COMPLETED"}
    assert encode_task_states(by_threads["run_id"]) == []


def test_a_flow_not_started_on_dask_opens_the_configured_cluster_itself(tmp_path, prefect_server):
    """A deployment's worker calls ingest_flow as it is: the config still sends the model work to Dask
    (here a local cluster of threads, processes = false)."""
    source = [{**SAMPLE_WIKI[1]}]  # globex: a few pages
    dask = scratch_config(tmp_path, "inproc", 'kind = "dask"\nworkers = 2\nprocesses = false\n', source)
    report = ingest_flow(config_path=str(dask))
    assert report["documents"]["failed"] == 0 and report["embeddings_computed"] > 0
    assert encode_task_states(report["run_id"])
    again = ingest_flow(config_path=str(dask))  # unchanged: nothing embedded, nothing sent
    assert again["embeddings_computed"] == 0 and again["documents"]["unchanged"] == report["documents"]["indexed"]
    assert encode_task_states(again["run_id"]) == []


def test_what_a_dask_worker_receives_pickles_without_the_model():
    """encode-texts carries a model name, strings and an int; an Encoder that travels anyway goes by name."""
    import cloudpickle

    from cairn.embedding import load_encoder
    from cairn.flows.dask_runner import encode_texts

    encoder = load_encoder("all-MiniLM-L6-v2")
    assert pickle.loads(pickle.dumps(encoder)) is encoder  # same process: the same (cached) encoder
    assert len(pickle.dumps(encoder)) < 200  # a name, not weights
    task = pickle.loads(cloudpickle.dumps(encode_texts))
    assert task.name == "encode-texts"
    cloudpickle.dumps({"model": "all-MiniLM-L6-v2", "texts": ["a", "b"], "batch_size": 64})
