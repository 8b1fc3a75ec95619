"""The 50 real CUAD contracts through the pdf source, and clause recall on ../shared/eval/dev/cuad.

    python -m bench.legal [--k 5] [--work DIR]

With --work the index is kept there: a second run re-measures recall only (the ingest figures of the first
run are kept from bench/results/legal.json).

Ingest (one run through the real flow, fresh index and embedding cache): documents, pages, pages/s (wall
time around the flow, Prefect, parsing, embedding and writing included), sections, chunks, SLA shares.
Recall: for each answerable question, search scoped to its contract (doc_tag = file name without the
extension) with the category description as the query; a question counts as found when a returned
section overlaps one of its answers (the answer, or one 8-word run of it, appears in the section after
case and whitespace are normalised).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import re
import statistics
import tempfile
import time
from pathlib import Path

from bench.common import RESULTS, require_shared, save, scratch_config
from bench.git import sla


def normalise(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def shingles(answer: str, size: int = 8) -> list[str]:
    words = normalise(answer).split()
    if len(words) <= size:
        return [" ".join(words)] if words else []
    return [" ".join(words[i : i + size]) for i in range(len(words) - size + 1)]


def found(answers: list[dict], texts: list[str]) -> bool:
    haystack = [normalise(t) for t in texts]
    return any(s and any(s in h for h in haystack) for a in answers for s in shingles(a["text"]))


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
    from cairn.query import Principal, Retriever

    questions = [json.loads(line) for line in open(shared / "eval/dev/cuad/qa.jsonl", encoding="utf-8")]
    questions = [q for q in questions if not q["is_impossible"]]
    reuse = bool(args.work) and (Path(args.work) / "index" / "cairn.db").exists()
    with (tempfile.TemporaryDirectory() if not args.work else _kept(Path(args.work))) as tmp:
        source = {"name": "cuad", "type": "pdf", "path": str(shared / "corpora/legal/cuad"), "tenant": "bench", "acl": ["all"]}
        config = str(scratch_config(Path(tmp), [source]))
        started = time.perf_counter()
        report = ingest_flow(config_path=config)
        wall = time.perf_counter() - started
        sizes = sla(config)
        from cairn.schemas.config import load_config
        from cairn.index.store import MilvusStore

        store = MilvusStore(load_config(config).milvus, dim=384)
        store.ensure_collection()
        try:
            pages = {r["document_id"]: r["extra"].get("page_count", 0)
                     for r in store.iterate("chunk_type == \"full_text\"", ["document_id", "extra"])}
        finally:
            store.close()
        retriever = Retriever.from_config(config)
        who = Principal("bench", ["all"])
        hits, latencies, by_category = 0, [], {}
        try:
            for q in questions:
                t0 = time.perf_counter()
                result = retriever.retrieve(q["category_description"], who, k=args.k, doc_tag=q["contract_id"])
                latencies.append(time.perf_counter() - t0)
                ok = found(q["answers"], [h.text for h in result.hits])
                hits += ok
                cat = by_category.setdefault(q["category"], [0, 0])
                cat[0] += ok
                cat[1] += 1
        finally:
            retriever.close()
    total_pages = sum(pages.values())
    worst = sorted(((c, round(f / n, 2), n) for c, (f, n) in by_category.items()), key=lambda x: x[1])[:6]
    ingest = {
        "documents_seen": report["documents"]["seen"], "indexed": report["documents"]["indexed"],
        "failed": report["failures"], "pages": total_pages, "seconds": round(wall, 1),
        "pages_per_second": round(total_pages / wall, 2), **sizes,
    }
    previous = RESULTS / "legal.json"
    if reuse and previous.exists():
        ingest = json.loads(previous.read_text())["ingest"]
    save("legal", {
        "corpus": "cuad (50 contracts)",
        "ingest": ingest,
        "clause_recall": {
            "k": args.k, "questions": len(questions), "found": hits, "recall": round(hits / len(questions), 3),
            "p50_ms": round(statistics.median(latencies) * 1000, 1), "weakest_categories": worst,
        },
    })


if __name__ == "__main__":
    main()
