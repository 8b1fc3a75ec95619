"""The labelled dev sets of ../shared/eval/dev and the corpora they are judged on, ingested through the real flow.

Each corpus lands in its own scratch Milvus Lite file under a work folder (default /tmp/cairn-eval) that is
kept between runs: the ingest flow's own idempotence makes a second run embed and write nothing, so tuning
the query side costs only queries. SciFact's BEIR corpus becomes one Markdown page per abstract (file name =
corpus id), so it goes through the normal wiki source, chunkers and index like any page.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import DEFAULT_MODEL, SHARED, scratch_config
from cairn.schemas import stable_id


def eval_config(folder: Path, sources: list[dict], backend: str = "auto", model: str = DEFAULT_MODEL) -> Path:
    """The bench scratch config, without per-ingest data-quality reports (not what is measured here)."""
    path = scratch_config(folder, sources, collection="eval", backend=backend, model=model)
    path.write_text(
        path.read_text() + f"[quality]\non_ingest = false\nreport_dir = {json.dumps(str(folder / 'reports'))}\n"
    )
    return path


TENANT, GROUP = "eval", "all"


@dataclass
class Query:
    id: str
    text: str
    relevant: dict[str, int]  # document_id -> graded relevance
    doc_tag: str | None = None  # scope (CUAD: the contract asked about)
    answers: list[str] = field(default_factory=list)  # CUAD: a hit is relevant when its text holds one


@dataclass
class DevSet:
    name: str
    config: Path
    queries: list[Query] = field(default_factory=list)
    bulk: bool = False  # written by `bulk_load` instead of the Prefect flow (see there why)


HALVES = ("tune", "held_out")


def half(query_id: str) -> str:
    """The fixed split of a dev set into two halves (#53: a setting is tuned on one, reported on the other): a
    numeric id (SciFact's) by its parity, even ids to tune; any other id by the parity of its SHA-1's first byte."""
    number = int(query_id) if query_id.isdigit() else hashlib.sha1(query_id.encode()).digest()[0]
    return HALVES[number % 2]


def _source(name: str, path: Path) -> dict:
    return {"name": name, "type": "wiki", "path": str(path), "tenant": TENANT, "acl": [GROUP]}


def runbooks(work: Path, backend: str = "auto", model: str = DEFAULT_MODEL) -> DevSet:
    """Prometheus-operator runbooks; query = the alert's summary (else description); relevant = its runbook page."""
    from cairn.schemas import SourceType
    from cairn.sources import document_id

    name = "prometheus-operator-runbooks"
    root = SHARED / "corpora" / "wiki" / name
    folder = work / "runbooks"
    folder.mkdir(parents=True, exist_ok=True)
    config = eval_config(folder, [_source(name, root)], backend, model)
    labels = SHARED / "eval" / "dev" / "runbooks" / f"{name}.alerts.jsonl"
    queries = []
    for line in labels.open(encoding="utf-8"):
        alert = json.loads(line)
        text = alert.get("summary") or alert.get("description") or alert["alertname"]
        queries.append(Query(alert["alertname"], text, {document_id(SourceType.WIKI, name, alert["relevant_doc"]): 1}))
    return DevSet("runbooks", config, queries)


def scifact(work: Path, backend: str = "auto", model: str = DEFAULT_MODEL, subset: int = 0) -> DevSet:
    """BEIR SciFact: 5,183 abstracts as pages `<corpus-id>.md`; queries + qrels of the dev split given to us.
    `subset` N > 0: a smaller set stated as such (a loaded machine embeds the whole corpus in hours): the first
    N / 2 dev questions of each half (`half`: id parity), over a corpus of the documents judged for
    them and, as distractors, each one's top SUBSET_DISTRACTORS abstracts by BM25 over the whole corpus."""
    from cairn.flows.beir import write_pages  # the same pages `cairn eval beir` writes
    from cairn.schemas import SourceType
    from cairn.sources import document_id

    folder = work / ("scifact" if not subset else f"scifact-subset{subset}")
    pages = folder / "pages"
    corpus = SHARED / "corpora" / "beir" / "scifact" / "corpus.jsonl"
    dev = SHARED / "eval" / "dev" / "scifact"
    qrels: dict[str, dict[str, int]] = {}
    with (dev / "qrels.tsv").open(encoding="utf-8") as handle:
        next(handle)
        for line in handle:
            qid, cid, score = line.rstrip("\n").split("\t")
            if int(score) > 0:
                qrels.setdefault(qid, {})[cid] = int(score)
    asked = [json.loads(line) for line in (dev / "queries.jsonl").open(encoding="utf-8")]
    asked = [q for q in asked if q["_id"] in qrels]
    if subset:
        even = [q for q in asked if int(q["_id"]) % 2 == 0][: subset // 2]
        odd = [q for q in asked if int(q["_id"]) % 2 == 1][: subset - subset // 2]
        asked = even + odd
        corpus = _scifact_subset_corpus(corpus, asked, qrels, folder)
    write_pages(corpus, pages)
    config = eval_config(folder, [_source("scifact", pages)], backend, model)
    queries = [
        Query(
            q["_id"],
            q["text"],
            {document_id(SourceType.WIKI, "scifact", f"{cid}.md"): grade for cid, grade in qrels[q["_id"]].items()},
        )
        for q in asked
    ]
    return DevSet("scifact", config, queries, bulk=True)


SUBSET_DISTRACTORS = 5


def _scifact_subset_corpus(corpus: Path, asked: list[dict], qrels: dict[str, dict[str, int]], folder: Path) -> Path:
    """The corpus lines of the judged documents of `asked` and of each question's top SUBSET_DISTRACTORS by
    BM25 (k1 1.2, b 0.75, lower-cased word tokens) over the whole corpus, written once to `folder`."""
    import math
    import re
    from collections import Counter

    target = folder / "corpus.jsonl"
    if target.exists():
        return target
    docs = [json.loads(line) for line in corpus.open(encoding="utf-8") if line.strip()]
    words = [re.findall(r"[a-z0-9]+", f"{d.get('title', '')} {d.get('text', '')}".lower()) for d in docs]
    counts = [Counter(w) for w in words]
    df = Counter(t for c in counts for t in c)
    mean = sum(len(w) for w in words) / len(words)
    keep = {cid for q in asked for cid in qrels[q["_id"]]}
    for q in asked:
        terms = set(re.findall(r"[a-z0-9]+", q["text"].lower()))
        idf = {t: math.log(1 + (len(docs) - df[t] + 0.5) / (df[t] + 0.5)) for t in terms if t in df}

        def bm25(i: int, idf: dict[str, float] = idf) -> float:
            n = len(words[i])
            return sum(
                v * counts[i][t] * 2.2 / (counts[i][t] + 1.2 * (0.25 + 0.75 * n / mean))
                for t, v in idf.items()
                if t in counts[i]
            )

        best = sorted(range(len(docs)), key=lambda i: -bm25(i))[:SUBSET_DISTRACTORS]
        keep.update(str(docs[i]["_id"]) for i in best)
    folder.mkdir(parents=True, exist_ok=True)
    with target.open("w", encoding="utf-8") as out:
        for d in docs:
            if str(d["_id"]) in keep:
                out.write(json.dumps(d) + "\n")
    return target


def cuad(work: Path, backend: str = "auto", model: str = DEFAULT_MODEL) -> DevSet:
    """CUAD: the dev split's contracts (CUAD's own text extraction) as pages, doc_tag = contract id. A question
    is scoped to its contract (doc_tag) and judged by whether a returned section holds an answer span, so it
    measures ranking inside one long document, where dominance, diversity and packing matter."""
    dev = SHARED / "eval" / "dev" / "cuad" / "qa.jsonl"
    rows = [json.loads(line) for line in dev.open(encoding="utf-8")]
    folder = work / "cuad"
    pages = folder / "pages"
    pages.mkdir(parents=True, exist_ok=True)
    for contract in sorted({r["contract_id"] for r in rows}):
        page = pages / f"{stable_id('cuad', contract)}.md"
        if not page.exists():
            text = (SHARED / "corpora" / "legal" / "cuad-txt" / f"{contract}.txt").read_text(
                encoding="utf-8", errors="replace"
            )
            title = contract.rsplit("_", 1)[-1]
            page.write_text(
                f"---\ntitle: {json.dumps(title)}\ndoc_tag: {json.dumps(stable_id('cuad', contract))}\n---\n"
                f"# {title}\n\n{text.strip()}\n",
                encoding="utf-8",
            )
    config = eval_config(folder, [_source("cuad", pages)], backend, model)
    queries = []
    for r in rows:
        if r["is_impossible"] or not r["answers"]:
            continue
        details = r["question"].split("Details:", 1)[-1].strip()
        queries.append(
            Query(
                r["id"],
                f"{r['category']}: {details}",
                {},
                stable_id("cuad", r["contract_id"]),
                [a["text"] for a in r["answers"] if a["text"].strip()],
            )
        )
    return DevSet("cuad", config, queries)


DEV_SETS = {"runbooks": runbooks, "scifact": scifact, "cuad": cuad}


def ingest(dev: DevSet) -> dict:
    """Bring the scratch collection in line with the corpus (a no-op when it already is)."""
    if dev.bulk:
        return bulk_load(dev)
    from cairn.flows.ingest import ingest_flow

    return ingest_flow(config_path=str(dev.config))


def bulk_load(dev: DevSet) -> dict:
    """The same connector, chunker, embedding cache and rows as the flow, written in large batches.

    Why not the flow: on SciFact's 5,183 pages the flow slowed from ~9 to ~4 embedded texts/s within 15
    minutes on this machine (CPU in the flow's main thread, not the model), too slow for a dev loop; the
    rows are built by the same functions (index.rows.build_rows), so retrieval sees what the flow writes."""
    from cairn.chunkers import chunk_document
    from cairn.embedding import encoder_for
    from cairn.index.cache import EmbeddingCache
    from cairn.index.rows import ChunkedDocument, build_rows
    from cairn.index.store import MilvusStore
    from cairn.schemas.config import load_config
    from cairn.sources import DiscoveryFailure, DocumentError, open_source

    config = load_config(dev.config)
    started = time.perf_counter()
    marker = Path(config.milvus.uri).parent / "bulk.done"
    if marker.exists():
        return json.loads(marker.read_text())
    encoder = encoder_for(config.embedding)
    cache = EmbeddingCache(config.embedding.cache_path, encoder.dim)
    store = MilvusStore(config.milvus, encoder.dim)
    store.ensure_collection(embedder=encoder.identity)
    counts = {"seen": 0, "indexed": 0, "failed": 0, "chunks": 0, "embeddings_computed": 0}
    for source_config in config.sources:
        source = open_source(source_config)
        batch: list[ChunkedDocument] = []
        refs = list(source.discover())
        for number, ref in enumerate(refs, 1):
            counts["seen"] += 1
            try:
                if isinstance(ref, DiscoveryFailure):
                    raise DocumentError(ref.locator, ref.reason)
                doc = source.load(ref)
                batch.append(ChunkedDocument(doc, chunk_document(doc, config.chunking)))
            except DocumentError:
                counts["failed"] += 1
            if len(batch) >= 256 or (number == len(refs) and batch):
                rows, stats = build_rows(batch, encoder, cache, config.embedding.batch_size)
                store.upsert(rows)
                counts["indexed"] += len(batch)
                counts["chunks"] += sum(not r.is_parent for r in rows)
                counts["embeddings_computed"] += stats.computed
                batch = []
                print(
                    f"bulk {dev.name}: {number}/{len(refs)} documents, {time.perf_counter() - started:.0f} s",
                    flush=True,
                )
    store.flush()
    store.close()
    cache.close()
    report = {"documents": counts, "seconds": round(time.perf_counter() - started, 1), "mode": "bulk"}
    marker.write_text(json.dumps(report))
    return report


if __name__ == "__main__":
    import sys

    work = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/cairn-eval")
    for name in sys.argv[2:] or list(DEV_SETS):
        dev = DEV_SETS[name](work)
        report = ingest(dev)
        print(name, len(dev.queries), "queries", json.dumps(report["documents"]), report["seconds"], flush=True)
