"""`cairn eval [beir]`: retrieval metrics (nDCG@10, recall@k, MRR, hit rate) of the configured pipeline on
labelled queries (BEIR qrels), and the same with each named step switched off in turn (--ablate).

`cairn eval beir --corpus C` first ingests a BEIR corpus through the normal ingest flow into a kept scratch
index (so only that mode imports Prefect). Arguments are checked before anything is opened.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from cairn.cli import output
from cairn.cli.exits import Outcome
from cairn.cli.options import (
    CallerGroupOption,
    CallerTenantOption,
    ConfigOption,
    JsonOption,
    config_path,
    load,
    principal,
)
from cairn.errors import UsageError

if TYPE_CHECKING:
    from cairn.query import Principal, Retriever
    from cairn.schemas.config import CairnConfig

INPUT_FILE = dict(exists=True, dir_okay=False, show_default=False)


@dataclass(frozen=True)
class EvalOptions:
    queries: Path
    qrels: Path
    beir: bool = False
    corpus: Path | None = None  # beir: the corpus.jsonl
    work: Path | None = None  # beir: the scratch folder
    tenant: str | None = None
    groups: tuple[str, ...] = ()
    k: int = 10
    ablate: tuple[str, ...] = ()
    as_json: bool = False


@dataclass(frozen=True)
class LabelledQuery:
    qid: str
    text: str
    relevant: dict[str, int]  # corpus id -> grade


def evaluate(
    ctx: typer.Context,
    # required options (no default) come first in Python; `mode` is still the command's only argument
    queries: Annotated[Path, typer.Option("--queries", help="JSONL of {_id or id, text}", **INPUT_FILE)],
    qrels: Annotated[
        Path, typer.Option("--qrels", help="TSV query-id, corpus-id (document_id or source path), score", **INPUT_FILE)
    ],
    mode: Annotated[
        Literal["beir"] | None,
        typer.Argument(help="beir: ingest --corpus into a scratch index first", show_default=False),
    ] = None,
    config: ConfigOption = None,
    corpus: Annotated[
        Path | None,
        typer.Option("--corpus", help="beir: the BEIR corpus.jsonl ({_id, title, text} per line)", **INPUT_FILE),
    ] = None,
    work: Annotated[
        Path | None,
        typer.Option(
            "--work", help="beir: scratch folder (default data/index/beir/<corpus>-<hash>)", show_default=False
        ),
    ] = None,
    tenant: CallerTenantOption = None,  # default: the collection's only tenant (docs/cli.md)
    group: CallerGroupOption = None,  # default: every group of the tenant
    k: Annotated[int, typer.Option("--k", help="sections retrieved per query", min=1)] = 10,
    ablate: Annotated[
        str | None,
        typer.Option(
            "--ablate", help="comma-separated steps to switch off one at a time (see [query] steps)", show_default=False
        ),
    ] = None,
    as_json: JsonOption = False,
) -> Outcome:
    """Retrieval metrics on labelled queries (BEIR qrels), as --tenant and --group (without them: the collection's
    only tenant with every one of its groups)."""
    steps = tuple(s.strip() for s in (ablate or "").split(",") if s.strip())
    options = EvalOptions(queries, qrels, mode == "beir", corpus, work, tenant, tuple(group or ()), k, steps, as_json)
    check_eval(options)
    labelled = read_labelled(options.queries, options.qrels)  # before a BEIR ingest: a bad file fails in seconds
    ingested = None
    if options.beir:
        evaluated, ingested, options = ingest_beir(options)
        named = config_path(ctx, config)
        if named is not None:  # the scratch index, asked as the named config asks (#53: its [query] was ignored)
            evaluated = evaluated.model_copy(update={"query": load(ctx, config).query})
    else:
        evaluated = load(ctx, config)
    report = run_eval(evaluated, options, labelled)
    if ingested is not None:
        report = {"principal": report.pop("principal"), "ingest": ingested, **report}
    print_eval(report, options.as_json)
    return Outcome.OK


def check_eval(options: EvalOptions) -> None:
    """Refuse a mode without its corpus, a corpus without its mode, and steps that do not exist."""
    from cairn.schemas.config import QUERY_STEPS

    if options.beir and not options.corpus:
        raise UsageError("cairn eval beir needs --corpus corpus.jsonl")
    if not options.beir and (options.corpus or options.work):
        raise UsageError("--corpus and --work are for `cairn eval beir`")
    unknown = [s for s in options.ablate if s not in QUERY_STEPS]
    if unknown:
        raise UsageError(f"unknown step(s) to ablate: {', '.join(unknown)}; known: {', '.join(QUERY_STEPS)}")


def ingest_beir(options: EvalOptions) -> tuple[CairnConfig, dict, EvalOptions]:
    """The BEIR corpus as pages of a kept scratch index, ingested as `cairn ingest` runs (in this process, or as a
    flow run where a Prefect API is configured; a rerun embeds nothing): its config, the ingest's document counts,
    and the options reading as the scratch index's only reader."""
    from cairn.cli.flowrun import begin_run, call_run, hosting
    from cairn.flows.beir import GROUP, TENANT, scratch_config
    from cairn.flows.progress import set_progress_display
    from cairn.schemas.config import load_config

    assert options.corpus is not None, "check_eval refuses beir mode without --corpus"
    try:
        config_path = scratch_config(options.corpus, options.work)
    except ValueError as exc:  # the user's corpus file cannot be turned into pages: say which line and why
        raise UsageError(str(exc)) from None
    output.note(f"cairn: ingesting {options.corpus} into {config_path.parent} (kept: a rerun embeds nothing)")
    set_progress_display("off" if options.as_json else "bar")
    config = load_config(config_path)
    launch = begin_run(config)
    with hosting(launch):
        ingested = asdict(call_run("ingest", config, launch).documents)
    return config, ingested, replace(options, tenant=TENANT, groups=(GROUP,))


def read_labelled(queries: Path, qrels_path: Path) -> list[LabelledQuery]:
    """The queries of `queries` that have a judgement in the qrels, in file order."""
    from cairn.query.eval import read_qrels

    try:
        qrels = read_qrels(qrels_path)
    except ValueError as exc:
        raise UsageError(f"{qrels_path}: not a qrels TSV (query-id, corpus-id, score): {exc}") from None
    labelled = []
    with open(queries, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                qid, text = str(item.get("_id", item.get("id"))), item["text"]
            except (ValueError, KeyError, AttributeError) as exc:
                raise UsageError(f'{queries} line {number}: not a query ({{"_id", "text"}}): {exc!r}') from None
            if qid in qrels:
                labelled.append(LabelledQuery(qid, text, qrels[qid]))
    if not labelled:
        raise UsageError(f"no query of {queries} has a judgement in {qrels_path}")
    return labelled


def run_eval(config: CairnConfig, options: EvalOptions, labelled: list[LabelledQuery]) -> dict[str, Any]:
    """{"principal", "queries", "metrics", "ablations": {step: metrics}}: the full pipeline, then each step off."""
    from cairn.query import Retriever

    retriever = Retriever.from_config(config)
    base = retriever.settings
    try:
        if options.tenant and options.groups:
            reader = principal(options.tenant, options.groups)
        else:
            tenant, groups = readers(retriever, options.tenant)
            reader = principal(tenant, list(options.groups) or groups)
        ablations: dict[str, dict[str, float]] = {}
        report = {
            "principal": {"tenant": reader.tenant, "groups": list(reader.groups)},
            "queries": len(labelled),
            "metrics": score(retriever, reader, labelled, options.k),
            "ablations": ablations,
        }
        for name in options.ablate:
            retriever.settings = base.model_copy(update={"steps": {**base.steps, **ablated(name)}})
            ablations[name] = score(retriever, reader, labelled, options.k)
    finally:
        retriever.settings = base
        retriever.close()
    return report


# A search leg switched off leaves the other serving alone, as it would: without the floors, which are set for the
# fused score (#53: "BM25 only" under them kept one result a question, nDCG@10 0.046 on short questions)
ALSO_OFF = {"dense_leg": {"floors": False}, "keyword_leg": {"floors": False}}


def ablated(step: str) -> dict[str, bool]:
    """The step switches of the variant "without `step`"."""
    return {step: False, **ALSO_OFF.get(step, {})}


def score(retriever: Retriever, reader: Principal, labelled: list[LabelledQuery], k: int) -> dict[str, float]:
    """Mean metrics of the retriever's current settings over the labelled queries."""
    from cairn.query.eval import corpus_id, documents_in_order, summarise

    runs = []
    for query in labelled:
        hits = retriever.retrieve(query.text, reader, k=k).hits
        ranked = documents_in_order([corpus_id(h.document_id, h.locator, query.relevant) for h in hits])
        runs.append((ranked, query.relevant))
    return summarise(runs, k=k)


def readers(retriever: Retriever, tenant: str | None) -> tuple[str, list[str]]:
    """Who evaluates when --tenant/--group are not given: the collection's only tenant (else the caller must
    choose) with every group found on its rows, so the metrics measure ranking, not access control."""
    tenants, groups = retriever.reader.tenants_and_groups(tenant)
    if not tenants:
        raise UsageError(
            f"no rows{' of tenant ' + repr(tenant) if tenant else ''} in {retriever.milvus.uri}: ingest first"
        )
    if len(tenants) > 1:
        raise UsageError(f"the collection holds several tenants ({', '.join(sorted(tenants))}): pass --tenant")
    return tenants.pop(), sorted(groups)


def print_eval(report: dict, as_json: bool) -> None:
    """The report as JSON, or one row per variant (full pipeline, then each ablation) and one column per metric."""
    if as_json:
        output.print_json(report)
        return
    names = list(report["metrics"])
    grid = output.Grid(
        [output.Column("variant"), *(output.Column(n, "right") for n in names)],
        title=f"{report['queries']} queries as {report['principal']['tenant']}",
    )
    rows = [(f"no {' / '.join(ablated(n))}", m) for n, m in report["ablations"].items()]
    for label, metrics in [("full", report["metrics"]), *rows]:
        grid.add(label, *(f"{metrics[n]:.4f}" for n in names))
    output.print_grid(grid)
