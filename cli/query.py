"""`cairn query`: hybrid retrieval as a principal (tenant + groups), one question or a JSONL batch.

Only `cairn.query` is imported (inside the command), never Prefect or the flows; the configured encoder loads in a
thread while it imports (`warm_encoder`). With `--url` the question goes to a running `cairn serve` instead
(cli/remote.py: nothing of the index or the model is opened here), and is printed the same way. The `--json` shape is a
contract scripts rely on (keys are only ever added); the human listing prints each hit's rank, the score the
ranking sorts on (`fused`) and the calibrated relevance the floors and confidence read (`relevance`, the
`score` of the JSON), labelled. With the default weighted fusion the two are the same number; with RRF they
differ and only the first orders the list.
"""

from __future__ import annotations

import json
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from cairn.cli import exits, output
from cairn.cli.exits import Outcome
from cairn.cli.options import (
    CallerGroupOption,
    CallerTenantOption,
    ConfigOption,
    JsonOption,
    load,
    parse_date,
    principal,
)
from cairn.errors import UsageError

if TYPE_CHECKING:
    from cairn.query import Principal, RetrievalResult, Retriever
    from cairn.schemas.config import CairnConfig

SNIPPET_CHARS = 240


@dataclass(frozen=True)
class QueryOptions:
    text: str | None = None
    tenant: str | None = None
    groups: tuple[str, ...] = ()
    k: int | None = None  # None: [query] k
    doc_tag: str | None = None
    as_of: str | None = None  # ISO date
    filters: str | None = None  # JSON object
    explain: bool = False
    queries: Path | None = None  # batch mode: JSONL in
    output: Path | None = None  # batch mode: JSONL out (default stdout)
    as_json: bool = False
    url: str | None = None  # ask the `cairn serve` at this URL (cli/remote.py)
    key_file: Path | None = None  # with url: the bearer key's file (default: $CAIRN_KEY)


@dataclass(frozen=True)
class Scope:
    """What narrows every question of one invocation, parsed from the options."""

    k: int | None = None
    as_of: int | None = None  # epoch seconds
    filters: dict | None = None
    explain: bool = False
    principal: Principal | None = None  # one question's caller (batch lines name their own)


def query(
    ctx: typer.Context,
    text: Annotated[str | None, typer.Argument(help="the question", show_default=False)] = None,
    config: ConfigOption = None,
    tenant: CallerTenantOption = None,  # required unless --queries (whose lines name their own)
    group: CallerGroupOption = None,
    k: Annotated[int | None, typer.Option("--k", help="sections to return (default: [query] k)", min=1)] = None,
    doc_tag: Annotated[
        str | None,
        typer.Option("--doc-tag", help="only sections of this document family (e.g. one contract)", show_default=False),
    ] = None,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of", help="ISO date: answer with what was valid then (history kept on purpose)", show_default=False
        ),
    ] = None,
    filters: Annotated[
        str | None,
        typer.Option(
            "--filters",
            help='JSON metadata filter, e.g. {"service_name": "ledger", "severity": ["sev1"]}',
            show_default=False,
        ),
    ] = None,
    explain: Annotated[
        bool, typer.Option("--explain", help="print the per-stage trace (scores, floors, timings)")
    ] = False,
    queries: Annotated[
        Path | None,
        typer.Option(
            "--queries",
            help="batch mode: a JSONL file of {id, text, tenant, groups, doc_tag?}",
            show_default=False,
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    output_path: Annotated[
        Path | None,
        typer.Option("--output", help="batch mode: write the JSONL results here (default: stdout)", show_default=False),
    ] = None,
    as_json: JsonOption = False,
    url: Annotated[
        str | None,
        typer.Option(
            "--url",
            help="ask the `cairn serve` running at this URL (as its key's principal) instead of opening the index",
            show_default=False,
        ),
    ] = None,
    key_file: Annotated[
        Path | None,
        typer.Option(
            "--key-file",
            help="with --url: the file holding the service's bearer key (default: $CAIRN_KEY)",
            show_default=False,
            dir_okay=False,
        ),
    ] = None,
) -> Outcome:
    """Hybrid search as a principal (tenant + groups)."""
    options = QueryOptions(
        text,
        tenant,
        tuple(group or ()),
        k,
        doc_tag,
        as_of,
        filters,
        explain,
        queries,
        output_path,
        as_json,
        url,
        key_file,
    )
    scope = check_query(options)
    if options.url:  # the service's configuration and index answer: none is read here
        return run_remote(options, scope)
    return run_query(load(ctx, config), options, scope)


def check_query(options: QueryOptions) -> Scope:
    """Refuse what cannot be asked before anything is opened; parse the date and the filter."""
    if not options.text and not options.queries:
        raise UsageError("give the question text, or --queries FILE.jsonl")
    if options.text and options.queries:
        raise UsageError("give the question text or --queries FILE.jsonl, not both")
    if options.url:
        check_remote(options)
    elif options.text and not (options.tenant and options.groups):
        raise UsageError("a query needs --tenant and at least one --group (the caller's principal)")
    if options.key_file and not options.url:
        raise UsageError("--key-file is the key of a service asked with --url")
    if options.output and not options.queries:
        raise UsageError("--output is for batch mode (--queries FILE.jsonl)")
    caller = None
    if options.text and options.tenant:  # a question's caller (checked above); a batch line names its own
        caller = principal(options.tenant, options.groups)
    return Scope(
        options.k, parse_date(options.as_of, "--as-of"), parse_filters(options.filters), options.explain, caller
    )


def check_remote(options: QueryOptions) -> None:
    """--url asks one question as the service's key's principal: no batch, no principal of the command line."""
    from cairn.cli.remote import check_url

    check_url(options.url or "")
    if options.queries:
        raise UsageError("--url asks one question: give its text; a batch (--queries) opens the index")
    if options.tenant or options.groups:
        raise UsageError("with --url the service answers as its key's principal: drop --tenant and --group")


def parse_filters(raw: str | None) -> dict | None:
    """--filters JSON -> a dict (the query module checks its keys and values)."""
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--filters is not valid JSON ({exc.msg} at character {exc.pos}): {raw}") from None
    if not isinstance(value, dict):
        raise UsageError(f"--filters must be a JSON object of field -> value(s), got {raw}")
    return value


def run_query(config: CairnConfig, options: QueryOptions, scope: Scope) -> Outcome:
    """Open the retriever, answer one question or the batch, print."""
    warming = warm_encoder(config)
    try:
        from cairn.index.engine_import import import_pymilvus

        import_pymilvus()  # before cairn.query imports it: without pandas and requests (index/engine_import.py)
        from cairn.query import Retriever

        retriever = Retriever.from_config(config)
    except BaseException:
        # an index to open first, say: the model's session may still be in the making, in native code, and an
        # interpreter torn down under it aborts (exit -6, "terminate called", instead of the error's own code)
        warming.join(WARM_JOIN_SECONDS)
        raise
    from cairn.query.answers import result_json

    try:
        if options.queries:
            return run_batch(retriever, options.queries, options.output, scope)
        question, caller = options.text, scope.principal
        assert question and caller, "check_query let through a question without its caller"
        result = retriever.retrieve(
            question, caller, k=scope.k, doc_tag=options.doc_tag, as_of=scope.as_of, filters=scope.filters
        )
    finally:
        retriever.close()
    outcome = print_answer(result_json(result), options.as_json, scope.explain)
    exits.nothing_left_to_finish()  # the index client is closed, the answer printed (cairn.cli.main)
    return outcome


def run_remote(options: QueryOptions, scope: Scope) -> Outcome:
    """--url: the question asked of the `cairn serve` there (cli/remote.py), its answer printed as `run_query`
    prints one."""
    from cairn.cli import remote

    url = remote.check_url(options.url or "")
    body: dict[str, object] = {"query": options.text, "explain": scope.explain}
    asked = {"k": scope.k, "doc_tag": options.doc_tag, "as_of": scope.as_of, "filters": scope.filters}
    body.update({name: value for name, value in asked.items() if value is not None})
    return print_answer(remote.ask(url, remote.read_key(options.key_file), body), options.as_json, scope.explain)


def print_answer(data: dict, as_json: bool, explain: bool) -> Outcome:
    """An answer (the `query --json` object), computed here or by a service, printed: as JSON, or for a person."""
    if not explain:
        data.pop("diagnostics", None)
    if as_json:
        output.print_json(data)
    else:
        print_listing(data, explain)
    return Outcome.OK


WARM_JOIN_SECONDS = 60.0  # what a failing `cairn query` waits at most for the encoder's load to end before it exits


def warm_encoder(config: CairnConfig) -> threading.Thread:
    """The configured encoder loaded in a thread while the query side imports (pymilvus and what it pulls in:
    1-2 s of a `cairn query`) and opens the index: the model's session is built in native code, mostly beside
    the imports, and the Retriever finds it loaded. What fails here fails again, and is said, when the Retriever
    loads it (an encoder other than the configured one, during a rebuild, is loaded then). The thread, started."""

    def load() -> None:
        try:
            from cairn.embedding.model import query_encoder_for

            query_encoder_for(config.embedding).encode_queries(["warm"])
        except Exception:  # noqa: BLE001 - the Retriever loads it again and says why
            return

    thread = threading.Thread(target=load, name="cairn-warm-encoder", daemon=True)
    thread.start()
    return thread


def run_batch(retriever: Retriever, queries: Path, out_path: Path | None, scope: Scope) -> Outcome:
    """--queries FILE.jsonl: one {"id", "text", "tenant", "groups", "doc_tag"?, "filters"?} per line -> one
    JSON line each; a line that cannot be answered is named on stderr and the others go on."""
    out = open(out_path, "w", encoding="utf-8") if out_path else sys.stdout
    failed = 0
    try:
        with open(queries, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    record = answer_line(retriever, json.loads(line), number, scope)
                except (KeyError, TypeError, ValueError) as exc:  # FilterError and bad JSON are ValueErrors
                    failed += 1
                    output.problem(f"cairn: {output.value(queries)} line {number}: {output.value(repr(exc))}")
                    continue
                output.print_json_line(record, out)
    finally:
        if out is not sys.stdout:
            out.close()
    return Outcome.LINES_FAILED if failed else Outcome.OK


def answer_line(retriever: Retriever, item: dict, number: int, scope: Scope) -> dict:
    """One batch line's answer: {"id", "results", "confidence", "gaps", "status", "empty_reason"[, "diagnostics"]}."""
    from cairn.query import Principal
    from cairn.query.answers import result_json

    result = retriever.retrieve(
        item["text"],
        Principal(item["tenant"], item["groups"]),
        k=scope.k,
        doc_tag=item.get("doc_tag"),
        as_of=scope.as_of,
        filters=item.get("filters", scope.filters),
    )
    record = {
        "id": item.get("id", number),
        "results": result_json(result)["results"],
        "confidence": result.confidence,
        "gaps": result.gaps,
        "status": result.status,
        "empty_reason": result.empty_reason,
    }
    if scope.explain:
        record["diagnostics"] = result.diagnostics
    return record


def print_result(result: RetrievalResult, explain: bool) -> None:
    """The answer for a person (`print_listing` of its JSON)."""
    from cairn.query.answers import result_json

    print_listing(result_json(result), explain)


def print_listing(data: dict, explain: bool) -> None:
    """The answer for a person, from its JSON (the same for an answer computed here and a service's): confidence,
    gaps, then each hit with its rank and both scores, labelled."""
    hits = data["results"]
    if data["status"] != "ok":
        why = f" [{data['empty_reason']}]" if data.get("empty_reason") else ""
        output.line(f"{output.value(data['message'])}{why}", style="yellow")
    else:
        output.line(f"confidence: {data['confidence']} ({data['confidence_reason']})", style="bold")
    if data["gaps"]:
        output.line(f"not found in any result: {output.value(', '.join(data['gaps']))}", style="yellow")
    if hits and all(hit["fused"] == hit["score"] for hit in hits):  # weighted fusion (the default)
        output.line(
            "ranked by relevance (the calibrated 0-1 score, JSON `score`; the main document's sections first)",
            style="dim",
        )
        output.line()
    elif hits:  # fusion = "rrf": the order is by a score of its own, shown beside the relevance
        output.line(
            "ranked by fused (the fusion score; the main document's sections first); "
            "relevance = calibrated 0-1 score, JSON `score`",
            style="dim",
        )
        output.line()
    for rank, hit in enumerate(hits, 1):
        snippet = " ".join(hit["text"].split())[:SNIPPET_CHARS]
        marks = "".join(f" [{f}]" for f in hit["flags"]) + (" [low relevance]" if hit.get("low_relevance") else "")
        output.line(f"{rank}. fused {hit['fused']:.4f}  relevance {hit['score']:.4f}{marks}", style="bold")
        output.line(f"   {output.value(hit['citation'])}", style="cyan")
        output.line(f"   {output.value(snippet)}...\n")
    if explain:
        output.print_json(data.get("diagnostics", {}))
