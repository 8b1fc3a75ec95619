"""The `cairn` command: ingest, backfill, reconcile, query, report, status."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from cairn.schemas.config import ConfigError, load_config

EXIT_FAILURES = 1  # --strict and some inputs failed
EXIT_USAGE = 2  # bad config, unreachable index: nothing ran


def _print_json(data: dict) -> None:
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def cmd_ingest(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    if args.source:
        config.source(args.source)  # fail fast on an unknown name
    if not config.milvus.is_lite:
        from cairn.index.store import open_client

        open_client(config.milvus, create=True).close()  # fail fast: an unreachable server
    from cairn.flows.noop import unchanged_run
    from cairn.flows.options import RunOptions

    report = unchanged_run(config, args.source, RunOptions(cleanup=args.cleanup))  # no flow run when nothing changed
    if report is None:
        from cairn.flows.ingest import ingest_flow
        from cairn.flows.progress import show_progress
        from cairn.flows.runner import configured

        show_progress(not args.json and sys.stderr.isatty())
        report = configured(ingest_flow, config)(
            config_path=str(config.config_path),
            source=args.source,
            cleanup=args.cleanup,
            wait_seconds=args.wait,
        )
    return _print_report(report, args)


def _print_report(report: dict, args: argparse.Namespace) -> int:
    if args.json:
        _print_json(report)
    else:
        d = report["documents"]
        print(
            f"documents: {d['seen']} seen, {d['indexed']} indexed, {d['unchanged']} unchanged, "
            f"{d['deleted']} deleted, {d['failed']} failed\n"
            f"sections: {report['sections']}  chunks: {report['chunks']}  tokens: {report['tokens']}  "
            f"embeddings computed: {report['embeddings_computed']}\n"
            f"seconds: {report['seconds']:.1f}  chunks/s: {report['chunks_per_second']:.1f}"
        )
        quality = report.get("quality")
        if quality:
            verdict = "passed" if quality["success"] else f"FAILED ({'; '.join(quality['failed'])})"
            print(f"data quality: {verdict}; report: {quality['report_dir']}/index.html")
        for failure in report["failures"]:
            print(f"FAILED {failure['source']}: {failure['document']}: {failure['error']}", file=sys.stderr)
    return EXIT_FAILURES if args.strict and report["failures"] else 0


def cmd_backfill(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    config.source(args.source)
    from cairn.flows.ingest import backfill_flow
    from cairn.flows.progress import show_progress
    from cairn.flows.runner import configured
    from cairn.schemas.records import parse_day

    parse_day(args.since), parse_day(args.until)  # fail fast on a bad date
    show_progress(not args.json and sys.stderr.isatty())
    report = configured(backfill_flow, config)(
        config_path=str(config.config_path),
        source=args.source,
        since=args.since,
        until=args.until,
        wait_seconds=args.wait,
        commits=args.commits,
    )
    return _print_report(report, args)


def cmd_reconcile(args: argparse.Namespace) -> int:
    from cairn.flows.reconcile import reconcile

    config = load_config(args.config)
    if args.source:
        config.source(args.source)
    drifts = reconcile(config, args.source)
    repaired = None
    if args.fix and not all(d.clean for d in drifts):
        from cairn.flows.ingest import ingest_flow
        from cairn.flows.runner import configured

        for drift in drifts:
            if not drift.clean and not drift.error:
                configured(ingest_flow, config)(config_path=str(config.config_path), source=drift.source, cleanup="full", wait_seconds=args.wait)
        repaired = reconcile(config, args.source)
    final = repaired if repaired is not None else drifts
    if args.json:
        data = {"clean": all(d.clean for d in final), "sources": [d.to_dict() for d in drifts]}
        if repaired is not None:
            data["after_fix"] = [d.to_dict() for d in repaired]
        _print_json(data)
    else:
        for label, batch in (("found", drifts), ("after fix", repaired or [])):
            for d in batch:
                state = "clean" if d.clean else "DRIFT"
                print(f"[{label}] {d.source}: {state}: {d.documents_in_source} in source, {d.documents_indexed} indexed, "
                      f"{d.rows_current} current rows")
                for name in ("missing", "outdated", "stale"):
                    for item in getattr(d, name):
                        print(f"  {name}: {item}")
                for item, problems in d.incomplete.items():
                    print(f"  incomplete: {item}: {'; '.join(problems)}")
                if d.orphan_rows:
                    print(f"  orphan rows: {d.orphan_rows}")
                if d.error:
                    print(f"  error: {d.error}")
    return 0 if all(d.clean for d in final) else EXIT_FAILURES


HIT_FIELDS = ("chunk_id", "document_id", "section_id", "breadcrumbs", "title", "source_uri", "score", "text", "citation")


def _result_json(result) -> dict:
    """The `query --json` contract (scripts rely on these keys; fields are only ever added)."""
    data = result.to_dict()
    data["results"] = [{**{f: getattr(h, f) for f in HIT_FIELDS}, **h.to_dict()} for h in result.hits]
    return data


def cmd_query(args: argparse.Namespace) -> int:
    from cairn.query import Principal, Retriever
    from cairn.schemas.records import parse_day

    if not args.text and not args.queries:
        raise ValueError("give the question text, or --queries FILE.jsonl")
    if args.text and not (args.tenant and args.group):
        raise ValueError("a query needs --tenant and at least one --group (the caller's principal)")
    config = load_config(args.config)
    filters = json.loads(args.filters) if args.filters else None
    as_of = parse_day(args.as_of) if args.as_of else None
    retriever = Retriever.from_config(config)
    try:
        if args.queries:
            return _query_batch(retriever, args, as_of, filters)
        result = retriever.retrieve(args.text, Principal(args.tenant, args.group), k=args.k, doc_tag=args.doc_tag,
                                    as_of=as_of, filters=filters)
    finally:
        retriever.close()
    if args.json:
        data = _result_json(result)
        if not args.explain:
            data.pop("diagnostics")
        _print_json(data)
        return 0
    if result.status != "ok":
        print(result.message)
    else:
        print(f"confidence: {result.confidence} ({result.confidence_reason})")
    if result.gaps:
        print(f"not found in any result: {', '.join(result.gaps)}")
    for rank, hit in enumerate(result.hits, 1):
        snippet = " ".join(hit.text.split())[:240]
        marks = "".join(f" [{f}]" for f in hit.flags) + (" [low relevance]" if hit.low_relevance else "")
        print(f"{rank}. [{hit.score:.4f}]{marks} {hit.citation}\n   {snippet}...\n")
    if args.explain:
        _print_json(result.diagnostics)
    return 0


def _query_batch(retriever, args: argparse.Namespace, as_of, filters) -> int:
    """--queries FILE.jsonl: one {"id", "text", "tenant", "groups", "doc_tag"?} per line -> one JSON line each."""
    from cairn.query import Principal

    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    failed = 0
    try:
        with open(args.queries, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    item = json.loads(line)
                    result = retriever.retrieve(item["text"], Principal(item["tenant"], item["groups"]), k=args.k,
                                                doc_tag=item.get("doc_tag"), as_of=as_of, filters=item.get("filters", filters))
                    data = _result_json(result)
                    record = {"id": item.get("id", number), "results": data["results"], "confidence": result.confidence,
                              "gaps": result.gaps, "status": result.status}
                    if args.explain:
                        record["diagnostics"] = result.diagnostics
                except (KeyError, TypeError, ValueError) as exc:
                    failed += 1
                    print(f"cairn: {args.queries} line {number}: {exc!r}", file=sys.stderr)
                    continue
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
    return EXIT_FAILURES if failed else 0


def _readers(retriever, tenant: str | None) -> tuple[str, list[str]]:
    """Who evaluates when --tenant/--group are not given: the collection's only tenant (else the caller must
    choose) with every group found on its rows, so the metrics measure ranking, not access control."""
    from cairn.index.store import MilvusStore

    store = MilvusStore(retriever.milvus, dim=0, client=retriever.client)
    where = 'chunk_type == "full_text"' + (f" and tenant_id == {_quote(tenant)}" if tenant else "")
    tenants: set[str] = set()
    groups: set[str] = set()
    for row in store.iterate(where, ["tenant_id", "access_control_list"]):
        tenants.add(row["tenant_id"])
        groups.update(row["access_control_list"])
    if not tenants:
        raise ValueError(f"no rows{' of tenant ' + repr(tenant) if tenant else ''} in {retriever.milvus.uri}: ingest first")
    if len(tenants) > 1:
        raise ValueError(f"the collection holds several tenants ({', '.join(sorted(tenants))}): pass --tenant")
    return tenants.pop(), sorted(groups)


def _quote(value: str) -> str:
    from cairn.schemas.collection import quote

    return quote(value)


def cmd_eval(args: argparse.Namespace) -> int:
    """Recall@k, nDCG@10, MRR, hit rate of the configured pipeline on labelled queries, per step ablation.
    `cairn eval beir --corpus C` first ingests a BEIR corpus through the normal pipeline into a scratch index."""
    from cairn.query import Principal, Retriever
    from cairn.query.eval import corpus_id, documents_in_order, read_qrels, summarise
    from cairn.schemas.config import QUERY_STEPS

    ingested = None
    if args.mode == "beir":
        if not args.corpus:
            raise ValueError("cairn eval beir needs --corpus corpus.jsonl")
        from cairn.flows.beir import GROUP, TENANT, scratch_config
        from cairn.flows.ingest import ingest_flow
        from cairn.flows.progress import show_progress

        config_path = scratch_config(Path(args.corpus), Path(args.work) if args.work else None)
        print(f"cairn: ingesting {args.corpus} into {config_path.parent} (kept: a rerun embeds nothing)", file=sys.stderr)
        show_progress(not args.json)
        ingested = ingest_flow(config_path=str(config_path))["documents"]
        config = load_config(config_path)
        args.tenant, args.group = TENANT, [GROUP]
    elif args.corpus:
        raise ValueError("--corpus is for `cairn eval beir`")
    else:
        config = load_config(args.config)
    qrels = read_qrels(args.qrels)
    queries = []
    with open(args.queries, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                item = json.loads(line)
                qid = str(item.get("_id", item.get("id")))
                if qid in qrels:
                    queries.append((qid, item["text"]))
    if not queries:
        raise ValueError(f"no query of {args.queries} has a judgement in {args.qrels}")
    ablate = [s for s in (args.ablate or "").split(",") if s]
    unknown = [s for s in ablate if s not in QUERY_STEPS]
    if unknown:
        raise ValueError(f"unknown step(s) to ablate: {', '.join(unknown)}; known: {', '.join(QUERY_STEPS)}")
    retriever = Retriever.from_config(config)
    base = retriever.settings
    report: dict = {}
    try:
        if args.tenant and args.group:
            principal = Principal(args.tenant, args.group)
        else:
            tenant, groups = _readers(retriever, args.tenant)
            principal = Principal(tenant, args.group or groups)
        report["principal"] = {"tenant": principal.tenant, "groups": list(principal.groups)}
        if ingested is not None:
            report["ingest"] = ingested
        for name in [None, *ablate]:
            retriever.settings = base if name is None else base.model_copy(update={"steps": {**base.steps, name: False}})
            runs = []
            for qid, text in queries:
                hits = retriever.retrieve(text, principal, k=args.k).hits
                ranked = documents_in_order([corpus_id(h.document_id, h.locator, qrels[qid]) for h in hits])
                runs.append((ranked, qrels[qid]))
            entry = {"queries": len(runs), "metrics": summarise(runs, k=args.k)}
            if name is None:
                report.update(entry)
                report["ablations"] = {}
            else:
                report["ablations"][name] = entry["metrics"]
    finally:
        retriever.close()
    if args.json:
        _print_json(report)
    else:
        rows = [("full", report["metrics"])] + [(f"no {n}", m) for n, m in report["ablations"].items()]
        names = list(report["metrics"])
        print(f"{'variant':<24}" + "".join(f"{n:>10}" for n in names))
        for label, metrics in rows:
            print(f"{label:<24}" + "".join(f"{metrics[n]:>10.4f}" for n in names))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from cairn.flows.report import NoCollection, quality_report

    config = load_config(args.config)
    try:
        result = quality_report(config, args.source, args.tenant)  # the step the cairn-report flow runs
    except NoCollection as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        _print_json(result.to_dict())
    else:
        failed = result.failed()
        print(f"{'PASSED' if result.success else 'FAILED'}: {len(failed)} of {len(result.results)} expectations failed "
              f"over {result.rows} rows")
        for r in failed:
            print(f"  {r.suite}: {r.column} ({r.expectation}): {r.unexpected_percent:.2f}% unexpected")
        print(f"report: {result.report_dir}/index.html")
    return 0 if result.success else EXIT_FAILURES


def cmd_status(args: argparse.Namespace) -> int:
    from cairn.index.store import MilvusStore, open_client

    config = load_config(args.config)
    client = open_client(config.milvus, create=False)
    if not client.has_collection(config.milvus.collection):
        print(f"no collection {config.milvus.collection!r} at {config.milvus.uri}: run `cairn ingest`", file=sys.stderr)
        return EXIT_USAGE
    store = MilvusStore(config.milvus, dim=0, client=client)
    store.load()
    counts = store.counts()
    store.close()
    rows = [
        {"tenant": t, "source": s, "chunk_type": c, "rows": n} for (t, s, c), n in sorted(counts.items())
    ]
    if args.json:
        _print_json({"uri": config.milvus.uri, "collection": config.milvus.collection, "rows": rows})
    else:
        print(f"{config.milvus.uri} / {config.milvus.collection}: {sum(counts.values())} rows")
        print(f"{'tenant':<16}{'source':<20}{'chunk_type':<12}{'rows':>8}")
        for row in rows:
            print(f"{row['tenant']:<16}{row['source']:<20}{row['chunk_type']:<12}{row['rows']:>8}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", help="config TOML (default: $CAIRN_CONFIG, else data/cairn.toml)")
    parser = argparse.ArgumentParser(prog="cairn", description="Ingest knowledge into Milvus and retrieve it.")
    commands = parser.add_subparsers(dest="command", required=True)

    ingest = commands.add_parser("ingest", parents=[common], help="bring the index in line with the configured sources")
    ingest.add_argument("--source", help="only this configured source")
    ingest.add_argument(
        "--cleanup", choices=["incremental", "full", "none"], help="override each source's cleanup mode for this run"
    )
    ingest.add_argument("--json", action="store_true", help="print the run report as JSON")
    ingest.add_argument("--strict", action="store_true", help="exit 1 when any input failed")
    ingest.add_argument("--wait", type=float, default=0.0, help="seconds to wait for another run holding the index")
    ingest.set_defaults(run=cmd_ingest)

    backfill = commands.add_parser("backfill", parents=[common], help="re-process a window of a source, or all of it")
    backfill.add_argument("--source", required=True)
    backfill.add_argument("--since", help="ISO date: documents updated at or after it")
    backfill.add_argument("--until", help="ISO date: documents updated before it")
    backfill.add_argument("--full", action="store_true", help="every document, whatever its date")
    backfill.add_argument(
        "--commits", type=int, help="git sources with keep_history: past versions written by the last N commits"
    )
    backfill.add_argument("--json", action="store_true")
    backfill.add_argument("--strict", action="store_true", help="exit 1 when any input failed")
    backfill.add_argument("--wait", type=float, default=0.0, help="seconds to wait for another run holding the index")
    backfill.set_defaults(run=cmd_backfill)

    rec = commands.add_parser("reconcile", parents=[common], help="compare the sources with the collection; --fix repairs")
    rec.add_argument("--source")
    rec.add_argument("--fix", action="store_true", help="re-index and clean up until the collection matches")
    rec.add_argument("--json", action="store_true")
    rec.add_argument("--wait", type=float, default=0.0)
    rec.set_defaults(run=cmd_reconcile)

    query = commands.add_parser("query", parents=[common], help="hybrid search as a principal (tenant + groups)")
    query.add_argument("text", nargs="?")
    query.add_argument("--tenant", help="the caller's tenant (required unless --queries)")
    query.add_argument("--group", action="append", help="a group of the caller (repeatable; required unless --queries)")
    query.add_argument("--k", type=int, default=None, help="sections to return (default: [query] k)")
    query.add_argument("--doc-tag", help="only sections of this document family (e.g. one contract)")
    query.add_argument("--as-of", help="ISO date: answer with what was valid then (history kept on purpose)")
    query.add_argument("--filters", help='JSON metadata filter, e.g. \'{"service_name": "ledger", "severity": ["sev1"]}\'')
    query.add_argument("--explain", action="store_true", help="print the per-stage trace (scores, floors, timings)")
    query.add_argument("--queries", help="batch mode: a JSONL file of {id, text, tenant, groups, doc_tag?}")
    query.add_argument("--output", help="batch mode: write the JSONL results here (default: stdout)")
    query.add_argument("--json", action="store_true")
    query.set_defaults(run=cmd_query)

    ev = commands.add_parser("eval", parents=[common], help="retrieval metrics on labelled queries (BEIR qrels)")
    ev.add_argument("mode", nargs="?", choices=["beir"], help="beir: ingest --corpus into a scratch index first")
    ev.add_argument("--corpus", help="beir: the BEIR corpus.jsonl ({_id, title, text} per line)")
    ev.add_argument("--work", help="beir: scratch folder (default data/index/beir/<corpus>-<hash>)")
    ev.add_argument("--queries", required=True, help="JSONL of {_id or id, text}")
    ev.add_argument("--qrels", required=True, help="TSV query-id, corpus-id (document_id or source path), score")
    ev.add_argument("--tenant", help="evaluate as this tenant (default: the collection's only tenant)")
    ev.add_argument("--group", action="append", help="a group of the evaluator (default: every group of the tenant)")
    ev.add_argument("--k", type=int, default=10)
    ev.add_argument("--ablate", help="comma-separated steps to switch off one at a time (see [query] steps)")
    ev.add_argument("--json", action="store_true")
    ev.set_defaults(run=cmd_eval)

    report = commands.add_parser("report", parents=[common], help="data-quality checks over the collection, as a report")
    report.add_argument("--source")
    report.add_argument("--tenant")
    report.add_argument("--json", action="store_true")
    report.set_defaults(run=cmd_report)

    status = commands.add_parser("status", parents=[common], help="rows per tenant, source and chunk type")
    status.add_argument("--json", action="store_true")
    status.set_defaults(run=cmd_status)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except ConfigError as exc:
        print(f"cairn: config error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:
        from cairn.index.store import StoreError
        from cairn.query import RetrievalError

        if isinstance(exc, (StoreError, RetrievalError, ValueError)):
            print(f"cairn: {exc}", file=sys.stderr)
            return EXIT_USAGE
        if type(exc).__name__ == "QualityFailed":  # flows.ingest: the report is written, the run failed on purpose
            print(f"cairn: {exc}", file=sys.stderr)
            return EXIT_FAILURES
        raise


if __name__ == "__main__":
    sys.exit(main())
