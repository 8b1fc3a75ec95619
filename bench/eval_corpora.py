"""The labelled dev sets of ../shared/eval/dev and the corpora they are judged on, ingested through the real flow.

Each corpus lands in its own scratch Milvus Lite file under a work folder (default /tmp/cairn-eval) that is
kept between runs: the ingest flow's own idempotence makes a second run embed and write nothing, so tuning
the query side costs only queries. SciFact's BEIR corpus becomes one Markdown page per abstract (file name =
corpus id), so it goes through the normal wiki source, chunkers and index like any page.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import SHARED, scratch_config


def eval_config(folder: Path, sources: list[dict]) -> Path:
    """The bench scratch config, without per-ingest data-quality reports (not what is measured here)."""
    path = scratch_config(folder, sources, collection="eval")
    path.write_text(path.read_text() + f"[quality]\non_ingest = false\nreport_dir = {json.dumps(str(folder / 'reports'))}\n")
    return path

TENANT, GROUP = "eval", "all"


@dataclass
class Query:
    id: str
    text: str
    relevant: dict[str, int]  # document_id -> graded relevance


@dataclass
class DevSet:
    name: str
    config: Path
    queries: list[Query] = field(default_factory=list)


def _source(name: str, path: Path) -> dict:
    return {"name": name, "type": "wiki", "path": str(path), "tenant": TENANT, "acl": [GROUP]}


def runbooks(work: Path) -> DevSet:
    """Prometheus-operator runbooks; query = the alert's summary (else description); relevant = its runbook page."""
    from sources.wiki import document_id

    name = "prometheus-operator-runbooks"
    root = SHARED / "corpora" / "wiki" / name
    folder = work / "runbooks"
    folder.mkdir(parents=True, exist_ok=True)
    config = eval_config(folder, [_source(name, root)])
    labels = SHARED / "eval" / "dev" / "runbooks" / f"{name}.alerts.jsonl"
    queries = []
    for line in labels.open(encoding="utf-8"):
        alert = json.loads(line)
        text = alert.get("summary") or alert.get("description") or alert["alertname"]
        queries.append(Query(alert["alertname"], text, {document_id(name, alert["relevant_doc"]): 1}))
    return DevSet("runbooks", config, queries)


def scifact(work: Path) -> DevSet:
    """BEIR SciFact: 5,183 abstracts as pages `<corpus-id>.md`; queries + qrels of the dev split given to us."""
    from sources.wiki import document_id

    folder = work / "scifact"
    pages = folder / "pages"
    if not (folder / ".written").exists():
        pages.mkdir(parents=True, exist_ok=True)
        for line in (SHARED / "corpora" / "beir" / "scifact" / "corpus.jsonl").open(encoding="utf-8"):
            doc = json.loads(line)
            title = " ".join(doc.get("title", "").split()) or doc["_id"]
            (pages / f"{doc['_id']}.md").write_text(f"# {title}\n\n{doc['text'].strip()}\n", encoding="utf-8")
        (folder / ".written").write_text("ok\n")
    config = eval_config(folder, [_source("scifact", pages)])
    dev = SHARED / "eval" / "dev" / "scifact"
    qrels: dict[str, dict[str, int]] = {}
    with (dev / "qrels.tsv").open(encoding="utf-8") as handle:
        next(handle)
        for line in handle:
            qid, cid, score = line.rstrip("\n").split("\t")
            if int(score) > 0:
                qrels.setdefault(qid, {})[document_id("scifact", f"{cid}.md")] = int(score)
    queries = []
    for line in (dev / "queries.jsonl").open(encoding="utf-8"):
        q = json.loads(line)
        if q["_id"] in qrels:
            queries.append(Query(q["_id"], q["text"], qrels[q["_id"]]))
    return DevSet("scifact", config, queries)


DEV_SETS = {"runbooks": runbooks, "scifact": scifact}


def ingest(dev: DevSet) -> dict:
    """Bring the scratch collection in line with the corpus (a no-op when it already is)."""
    from flows.ingest import ingest_flow

    return ingest_flow(config_path=str(dev.config))


if __name__ == "__main__":
    import sys

    work = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/cairn-eval")
    for name in sys.argv[2:] or list(DEV_SETS):
        dev = DEV_SETS[name](work)
        report = ingest(dev)
        print(name, len(dev.queries), "queries", json.dumps(report["documents"]), report["seconds"], flush=True)
