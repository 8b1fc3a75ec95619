"""The LangChain and LlamaIndex adapters, on the real libraries and a real index (the two-tenant wiki of
corpus.py, written straight into a Lite index): what each returns, for whom, and the docs' examples as printed."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode

from cairn.integrations import langchain as lc
from cairn.integrations import llamaindex as li
from cairn.query import Principal, Retriever
from tests.conftest import REPO
from tests.integration import corpus
from tests.integration.test_cli import python_blocks

LEDGER = "how do I promote the ledger replica"
LEAK = "how do I revoke the leaked vault token zebra-orchid-42"
FILLER = "record every action in the incident channel and check the dashboards"  # every page says so (corpus.FILLER)
SRE = Principal("acme", ["sre"])
# what both adapters' metadata carries besides what `cairn query --json` gives a result
METADATA = {
    "citation",
    "score",
    "vector_score",
    "keyword_score",
    "flags",
    "low_relevance",
    "recall_injected",
    "chunk_id",
    "document_id",
    "section_id",
    "title",
    "source_uri",
    "deep_link",
    "rank",
    "confidence",
    "status",
}


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    return corpus.index_directly(tmp_path_factory.mktemp("adapters"))


@pytest.fixture(scope="module")
def retriever(config):
    """One Retriever for the module, handed to adapters (which leave it open)."""
    opened = Retriever.from_config(config)
    yield opened
    opened.close()


def titles(items) -> list[str]:
    return [item.metadata.get("title") for item in items]  # a reason item (an empty answer) has no title


@pytest.mark.core
def test_langchain_documents_are_the_retrievers_hits_cited_for_the_fixed_principal(config, retriever):
    expected = retriever.retrieve(LEDGER, SRE, k=3)
    with lc.CairnRetriever.from_config(config, tenant="acme", groups=["sre"], k=3) as adapter:
        assert adapter.retriever is not retriever  # its own, opened from the config
        docs = adapter.invoke(LEDGER)
    assert docs and all(isinstance(d, Document) for d in docs)
    assert titles(docs)[0] == "Ledger DB failover"
    assert [d.id for d in docs] == [h.chunk_id for h in expected.hits]
    assert [d.page_content for d in docs] == [h.text for h in expected.hits]
    for rank, (doc, hit) in enumerate(zip(docs, expected.hits), 1):
        assert set(doc.metadata) >= METADATA
        assert doc.metadata["citation"] == hit.citation and "ledger-failover.md" in docs[0].metadata["citation"]
        assert (doc.metadata["score"], doc.metadata["vector_score"]) == (hit.score, hit.vector_score)
        assert (doc.metadata["rank"], doc.metadata["status"]) == (rank, "ok")
        assert doc.metadata["confidence"] == expected.confidence


def test_langchain_never_returns_what_the_principal_may_not_read(retriever):
    sre = lc.CairnRetriever(retriever=retriever, principal=SRE, k=5)
    security = lc.CairnRetriever(retriever=retriever, principal=Principal("acme", ["security"]), k=5)
    globex = lc.CairnRetriever(retriever=retriever, principal=Principal("globex", ["globex-ops"]), k=5)

    assert titles(security.invoke(LEAK))[0] == "Rotate leaked credentials"  # the page answers the question...
    leaked = sre.invoke(LEAK)  # ...and is not sre's to read
    assert "Rotate leaked credentials" not in titles(leaked)
    assert not any("zebra-orchid-42" in d.page_content for d in leaked)
    # nothing passed with a question changes who asks: invoke's extra arguments are not the retriever's
    assert "Rotate leaked credentials" not in titles(sre.invoke(LEAK, principal=Principal("acme", ["security"])))
    with pytest.raises(ValueError, match="frozen"):
        sre.principal = Principal("acme", ["security"])
    copied = sre.model_copy(update={"principal": Principal("acme", ["security"])})  # asks as what it says it is
    assert titles(copied.invoke(LEAK))[0] == "Rotate leaked credentials"
    assert "Rotate leaked credentials" not in titles(sre.invoke(LEAK))

    assert {"Ledger DB failover", "Kafka consumer lag"} <= set(titles(sre.invoke(FILLER)))
    other_tenant = globex.invoke(FILLER)
    assert titles(other_tenant) == ["Warehouse scanner API"]
    assert all(d.metadata["source_uri"].startswith("file:///wiki/globex/") for d in other_tenant)


def test_langchain_scope_fields_async_calls_and_a_chain(retriever):
    in_force = lc.CairnRetriever(retriever=retriever, principal=SRE, k=3, as_of="2026-01-01")
    before = lc.CairnRetriever(retriever=retriever, principal=SRE, k=3, as_of="2025-01-01")  # before every page
    other_source = lc.CairnRetriever(retriever=retriever, principal=SRE, filters={"source_name": "globex-wiki"})
    assert titles(in_force.invoke(LEDGER))[0] == "Ledger DB failover"
    (reason,) = before.invoke(LEDGER)  # nothing in force then: the reason in place of the hits (#53)
    assert reason.metadata["status"] == "no_results" and reason.metadata["empty_reason"] == "out_of_scope"
    assert reason.page_content == reason.metadata["message"] and "citation" not in reason.metadata
    quiet = lc.CairnRetriever(retriever=retriever, principal=SRE, as_of="2025-01-01", explain_empty=False)
    assert quiet.invoke(LEDGER) == [] and other_source.invoke(LEDGER)[0].metadata["status"] == "no_results"
    with pytest.raises(ValueError, match="unknown filter field 'nope'"):  # refused when made, not at a question
        lc.CairnRetriever(retriever=retriever, principal=SRE, filters={"nope": "x"})

    questions = [LEDGER, FILLER, "why is the settlement-writer consumer group lagging"]
    one_by_one = [[d.id for d in in_force.invoke(q)] for q in questions]
    together = asyncio.run(in_force.abatch(questions))  # concurrent, in LangChain's thread pool
    assert [[d.id for d in docs] for docs in together] == one_by_one
    assert [d.id for d in asyncio.run(in_force.ainvoke(LEDGER))] == one_by_one[0]

    chain = in_force | RunnableLambda(lambda docs: "\n".join(d.metadata["citation"] for d in docs))
    context = chain.invoke(LEDGER)
    assert context.splitlines()[0].startswith("Ledger DB failover")


@pytest.mark.core
def test_llamaindex_nodes_are_the_retrievers_hits_in_its_order(config, retriever):
    expected = retriever.retrieve(LEDGER, SRE, k=3)
    with li.CairnRetriever.from_config(config, tenant="acme", groups=["sre"], k=3) as adapter:
        found = adapter.retrieve(LEDGER)
    assert found and all(isinstance(n, NodeWithScore) and isinstance(n.node, TextNode) for n in found)
    assert [(n.node.node_id, n.score) for n in found] == [(h.chunk_id, h.score) for h in expected.hits]
    assert [n.node.text for n in found] == [h.text for h in expected.hits]
    first = found[0].node
    assert set(first.metadata) >= METADATA
    assert first.metadata["title"] == "Ledger DB failover" and first.metadata["citation"] == expected.hits[0].citation
    # what an LLM is shown of a node: its citation and text, not the scores and ids
    prompt = first.get_content(metadata_mode=MetadataMode.LLM)
    assert prompt.startswith(f"citation: {first.metadata['citation']}") and "vector_score" not in prompt
    assert first.get_content(metadata_mode=MetadataMode.EMBED) == first.text


def test_llamaindex_isolation_scope_and_async(retriever):
    sre = li.CairnRetriever(retriever, SRE, k=5)
    globex = li.CairnRetriever(retriever, Principal("globex", ["globex-ops"]), k=5)
    leaked = sre.retrieve(LEAK)
    assert "Rotate leaked credentials" not in [n.node.metadata.get("title") for n in leaked]
    assert not any("zebra-orchid-42" in n.node.text for n in leaked)
    assert [n.node.metadata["title"] for n in globex.retrieve(FILLER)] == ["Warehouse scanner API"]
    (reason,) = li.CairnRetriever(retriever, SRE, as_of="2025-01-01").retrieve(LEDGER)
    assert reason.score == 0.0 and reason.node.metadata["empty_reason"] == "out_of_scope"
    quiet = li.CairnRetriever(retriever, SRE, as_of="2025-01-01")
    quiet.explain_empty = False
    assert quiet.retrieve(LEDGER) == []
    with pytest.raises(ValueError, match="unknown filter field 'nope'"):
        li.CairnRetriever(retriever, SRE, filters={"nope": "x"})

    async def both():
        return await asyncio.gather(sre.aretrieve(LEDGER), sre.aretrieve(FILLER))

    asked = asyncio.run(both())
    assert [[n.node.node_id for n in nodes] for nodes in asked] == [
        [n.node.node_id for n in sre.retrieve(q)] for q in (LEDGER, FILLER)
    ]


def test_a_vague_question_through_either_adapter_returns_the_guidance_not_an_empty_list(retriever):
    for found in (
        lc.CairnRetriever(retriever=retriever, principal=SRE).invoke("help me please"),
        [n.node for n in li.CairnRetriever(retriever, SRE).retrieve("help me please")],
    ):
        (why,) = found
        assert why.metadata["status"] == "guidance" and why.metadata["empty_reason"] == "too_vague"
        text = why.page_content if isinstance(why, Document) else why.text
        assert text.startswith("The question is too vague") and "ledger-db primary failover" not in text


def test_an_adapter_over_a_retriever_handed_in_leaves_it_open(retriever):
    for module in (lc, li):
        adapter = module.CairnRetriever.from_config(retriever, tenant="acme", groups=["sre"], k=2)
        assert adapter.retriever is retriever
        adapter.close()
    assert retriever.retrieve(LEDGER, SRE, k=1).hits[0].title == "Ledger DB failover"


# Every attempt to reach the network (a DNS lookup, a TCP connect) from the first import on; the Lite server's
# Unix socket is Cairn's own and not one.
WATCH_NETWORK = """
import json, socket, sys
attempts = []
def hook(event, args):
    if event == "socket.getaddrinfo" or (event == "socket.connect" and args[0].family != socket.AF_UNIX):
        attempts.append(f"{event} {args!r}"[:200])
sys.addaudithook(hook)
from cairn.integrations import langchain, llamaindex
with langchain.CairnRetriever.from_config(sys.argv[1], tenant="acme", groups=["sre"], k=2) as retriever:
    found = [[d.metadata["title"] for d in retriever.invoke(sys.argv[2])]]
with llamaindex.CairnRetriever.from_config(sys.argv[1], tenant="acme", groups=["sre"], k=2) as retriever:
    found += [[n.node.metadata["title"] for n in retriever.retrieve(sys.argv[2])]]
print(json.dumps({"found": found, "attempts": attempts, "nltk": "nltk" in sys.modules}))
"""


def test_importing_and_asking_through_both_adapters_reaches_no_network(config):
    done = subprocess.run(
        [sys.executable, "-c", WATCH_NETWORK, str(config), LEDGER],
        cwd=REPO,
        # LangSmith tracing, a developer's own setting, would send traces: off here
        env={k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_"))},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["found"][0][0] == report["found"][1][0] == "Ledger DB failover"  # it did ask, through both
    assert report["attempts"] == []
    assert not report["nltk"]  # LlamaIndex's NLTK data (fetched on first use) is not even imported


@pytest.mark.parametrize(
    ("module", "framework", "extra"),
    [("langchain", "langchain_core", "langchain"), ("llamaindex", "llama_index", "llamaindex")],
)
def test_without_its_framework_an_adapter_says_which_extra_to_install(module, framework, extra):
    # None in sys.modules makes the framework's import fail as if it were not installed
    code = f"import sys; sys.modules[{framework!r}] = None; import cairn.integrations.{module}"
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert f"ImportError: cairn.integrations.{module} needs" in done.stderr
    assert f'pip install "cairn[{extra}]"' in done.stderr


@pytest.mark.parametrize("module", ["langchain", "llamaindex"])
def test_the_docs_adapter_example_runs_as_printed(module, config, capsys):
    (example,) = [b for b in python_blocks(REPO / "docs" / "retrieval.md") if f"cairn.integrations.{module}" in b]
    exec(example.replace('"data/cairn.toml"', json.dumps(str(config))), {})  # the page's own code, as printed
    lines = capsys.readouterr().out.splitlines()
    assert lines and float(lines[0].split()[0]) > 0
    assert "Ledger DB failover" in lines[0] and "ledger-failover.md" in lines[0]
