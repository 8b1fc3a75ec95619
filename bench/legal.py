"""The 50 real CUAD contracts through the pdf source, and clause recall on ../shared/eval/dev/cuad.

    python -m bench.legal [--k 5] [--work DIR]

With --work the index is kept there: a second run re-measures recall only (the ingest figures of the first
run are kept from bench/results/legal.json).

Ingest (one run through the real flow, fresh index and embedding cache, after a warm-up ingest of one
Markdown page so that Prefect's temporary server and the model's weights are not counted): documents,
pages, pages/s (wall time around the flow: parsing, embedding and writing included), sections, chunks, SLA
shares, chunk health. Then the raw model encoding exactly the texts that ingest embedded (re-derived from
the rows written, each checked against the run's embedding cache), at the pipeline's batch size: the
model's share of the ingest's wall time (goal >= 0.65). Then parse ms/page: every contract parsed again
through the source's parser alone (worker start included), total seconds / pages.
Recall: for each answerable question, search scoped to its contract (doc_tag = file name without the
extension) with the category description as the query; a question counts as found when a returned
section overlaps one of its answers (the answer, or one 8-word run of it, appears in the section with case,
punctuation and whitespace ignored: CUAD's answer strings come from its own text extraction, which splits
words such as the superscript in "20t h day of December 2018", where the PDF's text layer reads "20th").

Two retrievers, side by side: the default pipeline (the configuration's own [query] settings) and the plain
hybrid retriever: the dense child-vector leg and the BM25 leg, fused as the pipeline fuses them (`[query] fusion`,
weighted by default), with every other step that can
drop or reorder sections off (gate, transform, floors, second pass, sparse-document recall, dominance,
diversity; the abstract leg is off in both). For each: clause recall@k (the found rule over the top k) and
nDCG@10 by section: a separate k=10 search, gain 1 for a returned section that holds an answer span (the
same found rule), ideal = min(10, the contract's answer-bearing sections, counted over every section of the
contract in the index).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from bench.common import RESULTS, require_shared, save, scratch_config
from bench.git import sla

WARM_UP = "# Warm up\n\nStarts Prefect's temporary server and loads the model before timing.\n"


def normalise(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def shingles(answer: str, size: int = 8) -> list[str]:
    words = normalise(answer).split()
    if len(words) <= size:
        return [" ".join(words)] if words else []
    return [" ".join(words[i : i + size]) for i in range(len(words) - size + 1)]


def found(answers: list[dict], texts: list[str]) -> bool:
    # spaces ignored: extractions split words differently; each answer's runs compacted once, not per text
    needles = {s.replace(" ", "") for a in answers for s in shingles(a["text"]) if s}
    haystack = [normalise(t).replace(" ", "") for t in texts]
    return any(n in h for n in needles for h in haystack)


PLAIN_HYBRID_OFF = (
    "gate",
    "transform",
    "floors",
    "rerank",
    "sparse_doc_recall",
    "dominance",
    "diversity",
    "abstract_leg",
)


def plain_hybrid(settings):
    """The same settings with only the dense and BM25 legs and their fusion left on."""
    return settings.model_copy(update={"steps": {**settings.steps, **{name: False for name in PLAIN_HYBRID_OFF}}})


def section_ndcg(returned: list[str], answer_bearing: set[str], k: int = 10) -> float:
    """nDCG@k over section ids with binary gains; the ideal ranks every answer-bearing section first."""
    from cairn.query.eval import ndcg_at

    return ndcg_at(returned, {section: 1 for section in answer_bearing}, k)


def _warm_up(folder: Path) -> None:
    from cairn.embedding import encoder_for
    from cairn.flows.ingest import ingest_flow
    from cairn.schemas.config import load_config

    (folder / "wiki").mkdir(parents=True, exist_ok=True)
    (folder / "wiki" / "w.md").write_text(WARM_UP)
    config = scratch_config(
        folder, [{"name": "w", "type": "wiki", "path": str(folder / "wiki"), "tenant": "bench", "acl": ["all"]}]
    )
    ingest_flow(config_path=str(config))
    encoder_for(load_config(config).embedding).encode(["warm up"])


def texts_embedded(config_path: str) -> tuple[list[str], int]:
    """The model inputs the ingest embedded, re-derived from its rows (a child's search_text is its model
    input; a section's abstract input is its header plus its abstract), kept when the run's embedding cache
    holds their key; and how many of the cache's vectors were not re-derived (should be 0)."""
    from cairn.embedding import encoder_for
    from cairn.index.cache import text_key
    from cairn.index.store import MilvusStore
    from cairn.schemas.config import load_config
    from cairn.schemas.row_links import ParentLinks

    config = load_config(config_path)
    store = MilvusStore(config.milvus, dim=384)
    store.ensure_collection()
    texts: list[str] = []
    try:
        for row in store.iterate("is_current == true", ["chunk_type", "search_text", "text", "extra"]):
            if row.chunk_type == "child":
                texts.append(row.search_text)
            else:
                header = row.search_text[: len(row.search_text) - len(row.text) - 1]
                abstract = ParentLinks.from_row(row).abstract
                texts.append(abstract if abstract.startswith(header) else f"{header}\n{abstract}")
    finally:
        store.close()
    texts = list(dict.fromkeys(texts))
    identity = encoder_for(config.embedding).identity
    with sqlite3.connect(config.embedding.cache_path) as db:
        cached = {key for (key,) in db.execute("SELECT key FROM vectors")}
    kept = [t for t in texts if text_key(identity, t) in cached]
    return kept, len(cached) - len(kept)


def model_share(config_path: str, wall: float) -> dict:
    """Raw model seconds on the texts the ingest embedded / the ingest's wall seconds."""
    from cairn.embedding import encoder_for
    from cairn.schemas.config import load_config

    embedding = load_config(config_path).embedding
    texts, missed = texts_embedded(config_path)
    encoder = encoder_for(embedding)
    started = time.perf_counter()
    encoder.encode(texts, batch_size=embedding.batch_size)
    raw = time.perf_counter() - started
    return {
        "texts_embedded": len(texts),
        "cached_vectors_not_rederived": missed,
        "raw_model_seconds": round(raw, 1),
        "model_share_of_wall": round(raw / wall, 3),
    }


def parse_speed(folder: Path) -> dict:
    """Every contract through the source's parser alone (its worker process started fresh): ms per page."""
    from cairn.sources.pdf import extract_text
    from cairn.sources.pdfparse import WORKER

    WORKER.stop()
    pages, started = 0, time.perf_counter()
    for path in sorted(p for p in folder.iterdir() if p.suffix.lower() == ".pdf"):
        pages += len(extract_text(path, path.name).pages)
    seconds = time.perf_counter() - started
    return {"parse_seconds": round(seconds, 1), "parse_ms_per_page": round(1000 * seconds / max(1, pages), 1)}


def health(config_path: str) -> dict:
    """The chunk-health figures of the sections written: mean score, share under 0.5."""
    from cairn.index.store import MilvusStore
    from cairn.schemas.config import load_config

    store = MilvusStore(load_config(config_path).milvus, dim=384)
    store.ensure_collection()
    try:
        scores = [
            r.quality_flags.get("chunk_health_score", 1.0)
            for r in store.iterate('chunk_type == "full_text"', ["quality_flags"])
        ]
    finally:
        store.close()
    return {
        "health_mean": round(statistics.fmean(scores), 4) if scores else None,
        "health_under_0_5": round(sum(s < 0.5 for s in scores) / len(scores), 4) if scores else None,
    }


@contextlib.contextmanager
def _kept(folder: Path):
    folder.mkdir(parents=True, exist_ok=True)
    yield str(folder)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--work", help="keep the index here; a rerun measures recall only")
    args = parser.parse_args()
    shared = require_shared()
    from cairn.flows.ingest import ingest_flow
    from cairn.query import Retriever

    questions = [json.loads(line) for line in open(shared / "eval/dev/cuad/qa.jsonl", encoding="utf-8")]
    questions = [q for q in questions if not q["is_impossible"]]
    reuse = bool(args.work) and (Path(args.work) / "index" / "cairn.db").exists()
    with tempfile.TemporaryDirectory() if not args.work else _kept(Path(args.work)) as tmp:
        source = {
            "name": "cuad",
            "type": "pdf",
            "path": str(shared / "corpora/legal/cuad"),
            "tenant": "bench",
            "acl": ["all"],
        }
        config = str(scratch_config(Path(tmp), [source]))
        if not reuse:
            _warm_up(Path(tmp) / "warm")
        started = time.perf_counter()
        report = ingest_flow(config_path=config)
        wall = time.perf_counter() - started
        sizes = {**sla(config), **health(config)}
        if not reuse:
            sizes.update(model_share(config, wall))
            sizes.update(parse_speed(shared / "corpora/legal/cuad"))
        from cairn.index.store import MilvusStore
        from cairn.schemas.config import load_config

        store = MilvusStore(load_config(config).milvus, dim=384)
        store.ensure_collection()
        try:
            pages = {
                r.document_id: r.extra.get("page_count", 0)
                for r in store.iterate('chunk_type == "full_text"', ["document_id", "extra"])
            }
            sections: dict[str, dict[str, str]] = {}
            for r in store.iterate('chunk_type == "full_text"', ["chunk_id", "doc_tag", "text"]):
                sections.setdefault(r.doc_tag, {})[r.chunk_id] = r.text
        finally:
            store.close()
        variants = {}
        for name in ("default", "plain_hybrid"):
            retriever = Retriever.from_config(config)
            if name == "plain_hybrid":
                retriever.settings = plain_hybrid(retriever.settings)
            variants[name] = _clause_recall(retriever, questions, sections, args.k)
    total_pages = sum(pages.values())
    ingest = {
        "documents_seen": report["documents"]["seen"],
        "indexed": report["documents"]["indexed"],
        "failed": report["failures"],
        "pages": total_pages,
        "seconds": round(wall, 1),
        "pages_per_second": round(total_pages / wall, 2),
        **sizes,
    }
    previous = RESULTS / "legal.json"
    if reuse and previous.exists():
        ingest = json.loads(previous.read_text())["ingest"]
    save(
        "legal",
        {
            "corpus": "cuad (50 contracts)",
            "ingest": ingest,
            "clause_recall": variants["default"],
            "clause_recall_plain_hybrid": variants["plain_hybrid"],
            "plain_hybrid_steps_off": list(PLAIN_HYBRID_OFF),
        },
    )
    for name, v in variants.items():
        print(f"{name}: clause recall@{args.k} {v['recall']} ({v['found']}/{v['questions']}), nDCG@10 {v['ndcg@10']}")
    print(
        f"model share of wall {ingest.get('model_share_of_wall')} "
        f"(raw model {ingest.get('raw_model_seconds')} s / ingest {ingest['seconds']} s), "
        f"{ingest['pages_per_second']} pages/s, parse {ingest.get('parse_ms_per_page')} ms/page"
    )


def _clause_recall(retriever, questions: list[dict], sections: dict[str, dict[str, str]], k: int) -> dict:
    from cairn.query import Principal

    who = Principal("bench", ["all"])
    hits, latencies, by_category, ndcgs, missed = 0, [], {}, [], []
    try:
        for q in questions:
            t0 = time.perf_counter()
            result = retriever.retrieve(q["category_description"], who, k=k, doc_tag=q["contract_id"])
            latencies.append(time.perf_counter() - t0)
            ok = found(q["answers"], [h.text for h in result.hits])
            hits += ok
            if not ok:
                missed.append(q["id"])
            cat = by_category.setdefault(q["category"], [0, 0])
            cat[0] += ok
            cat[1] += 1
            top10 = retriever.retrieve(q["category_description"], who, k=10, doc_tag=q["contract_id"])
            bearing = {cid for cid, text in sections.get(q["contract_id"], {}).items() if found(q["answers"], [text])}
            ndcgs.append(section_ndcg([h.chunk_id for h in top10.hits], bearing))
    finally:
        retriever.close()
    worst = sorted(((c, round(f / n, 2), n) for c, (f, n) in by_category.items()), key=lambda x: x[1])[:6]
    return {
        "k": k,
        "questions": len(questions),
        "found": hits,
        "recall": round(hits / len(questions), 3),
        "ndcg@10": round(statistics.fmean(ndcgs), 3) if ndcgs else None,
        "p50_ms": round(statistics.median(latencies) * 1000, 1),
        "weakest_categories": worst,
        "missed": missed,
    }


if __name__ == "__main__":
    main()
