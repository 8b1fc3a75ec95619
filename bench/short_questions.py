"""Short questions, as people type them into a search box: the default pipeline against the gate and the floors
off, on a labelled set written for Cairn (bench/data/short_questions.jsonl: alert names, product terms and
two-word topics of the PagerDuty incident-response docs and the prometheus-operator runbooks, each with the
page that answers it). Kept small: one index of the two corpora, bulk-loaded once into --work.

    python -m bench.short_questions [--work /tmp/cairn-short] [--variants full,no_gate,no_gate_floors]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench.common import SHARED
from bench.eval_corpora import GROUP, TENANT, DevSet, Query, _source, bulk_load, eval_config

DATA = Path(__file__).parent / "data" / "short_questions.jsonl"
CORPORA = ("pagerduty-incident-response-docs", "prometheus-operator-runbooks")
VARIANTS = {
    "full": {},
    "no_gate": {"steps": {"gate": False}},
    "no_gate_floors": {"steps": {"gate": False, "floors": False}},
}


def short_set(work: Path) -> DevSet:
    """The index of both corpora and the labelled short questions (relevant: the page, by its path)."""
    from cairn.schemas import SourceType
    from cairn.sources import document_id

    folder = work / "short"
    folder.mkdir(parents=True, exist_ok=True)
    sources = [_source(name, SHARED / "corpora" / "wiki" / name) for name in CORPORA]
    config = eval_config(folder, sources)
    queries = []
    for line in DATA.open(encoding="utf-8"):
        if not line.strip():
            continue
        item = json.loads(line)
        relevant = {document_id(SourceType.WIKI, item["corpus"], path): 1 for path in item["relevant"]}
        queries.append(Query(item["id"], item["text"], relevant))
    return DevSet("short", config, queries, bulk=True)


def main() -> None:
    from bench.eval import evaluate
    from bench.eval_memo import MemoEncoder
    from cairn.embedding import query_encoder_for
    from cairn.schemas.config import load_config

    parser = argparse.ArgumentParser()
    parser.add_argument("--work", default="/tmp/cairn-short")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    dev = short_set(Path(args.work))
    bulk_load(dev)
    encoder = MemoEncoder(query_encoder_for(load_config(dev.config).embedding))  # each question embedded once
    report = {}
    for name in args.variants.split(","):
        result = evaluate(dev, VARIANTS[name], encoder, args.k, None)
        report[name] = {"metrics": result["metrics"], "statuses": result["statuses"]}
        print(name, json.dumps(report[name]), flush=True)
    print(json.dumps({"queries": len(dev.queries), "tenant": TENANT, "group": GROUP, "variants": report}))


if __name__ == "__main__":
    main()
