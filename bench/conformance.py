"""The Milvus behaviours Cairn relies on, run against any Milvus URI and compared with the embedded engine.

    python -m bench.conformance --uri URI [--json]

URI: a Milvus Lite folder (`.../cairn.db`, reached as Cairn reaches one: through its index server), or a Milvus
server's `http(s)://host:port` (token from $CAIRN_MILVUS_TOKEN). Each behaviour makes the same calls, through
Cairn's access layer (index/milvus.py `Connection`), on a scratch collection of Cairn's own schema and indexes
(schemas/collection.py) at URI and on the embedded engine (Milvus Lite in a scratch folder), and compares what
each observed: BM25 score sign and scale, IDF, dense cosine scale, filters with escaping (Cairn's `quote`, the ACL
`like`), the partition key, aliases and collection properties, group_by, upsert and delete by id, iterators, and
the shape of a hit. It prints PASS or DIFF per behaviour, with both observations of each difference, and exits 1
when anything differs (or a behaviour failed on the embedded engine itself: a broken probe), 2 when URI cannot be
reached. Its collections (cairn_conformance_<pid>_<n>) are dropped at the end, whatever happened; nothing else at
URI is touched.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

DIM = 8
TENANTS = ("acme", "globex")
HOSTILE = ['say "hi"', "back\\slash", "line\nbreak", "tab\there", "100% _under_", "it's", "|7c|"]
HOSTILE_GROUP = 'a"b\\c%_|x'
Observation = dict[str, Any]


def vector(seed: int) -> list[float]:
    """A unit vector of DIM floats, one per seed, the same on every engine."""
    raw = [((seed * 7 + i * 3) % 11) - 5.0 + (0.5 if i == seed % DIM else 0.0) for i in range(DIM)]
    norm = sum(x * x for x in raw) ** 0.5 or 1.0
    return [x / norm for x in raw]


# (chunk_id, document_id, tenant, groups, search text, title): two batches, flushed apart (two segments)
FIRST = [
    ("c1", "d1", "acme", ["sre"], "ledger failover promote the replica with pg_ctl", "Ledger failover"),
    ("c2", "d1", "acme", ["sre"], "ledger failover check the replication lag first", "Ledger failover"),
    ("c3", "d2", "acme", ["sre", "dba"], "ledger backup and restore from the nightly snapshot", "Ledger backup"),
    ("c4", "d3", "acme", ["security"], "invoice worker restart after a deploy", "Invoice worker"),
    ("c5", "d4", "globex", ["globex-ops"], "ledger ledger ledger replica", "Globex ledger"),
]
SECOND = [
    ("c6", "d5", "acme", ["sre"], "rotate the kafka credentials", "Kafka credentials"),
    ("c7", "d6", "acme", [HOSTILE_GROUP], "a page only a hostile group may read", "Hostile group"),
] + [(f"h{i}", f"dh{i}", "acme", ["sre"], f"hostile title number {i}", title) for i, title in enumerate(HOSTILE)]


def rows(spec: list[tuple[str, str, str, list[str], str, str]], schema: Any) -> list[dict[str, Any]]:
    """Full rows of Cairn's schema (every field; the BM25 output left to the engine)."""
    from pymilvus import DataType

    from cairn.schemas.collection import SPARSE_FIELD, acl_key

    blank: dict[Any, Any] = {DataType.VARCHAR: "", DataType.INT64: 0, DataType.BOOL: True, DataType.JSON: {}}
    out = []
    for n, (chunk_id, document, tenant, groups, text, title) in enumerate(spec):
        row: dict[str, Any] = {}
        for field in schema.fields:
            if field.name == SPARSE_FIELD:
                continue
            if field.dtype == DataType.FLOAT_VECTOR:
                row[field.name] = vector(n + (0 if spec is FIRST else 100))
            elif field.dtype == DataType.ARRAY:
                row[field.name] = []
            else:
                row[field.name] = blank[field.dtype]
        row.update(chunk_id=chunk_id, document_id=document, tenant_id=tenant, title=title, text=text)
        row.update(search_text=text, acl_key=acl_key(groups), access_control_list=groups, chunk_type="child")
        out.append(row)
    return out


class Engine:
    """One Milvus (URI, or the embedded reference) with the scratch collections made on it."""

    def __init__(self, uri: str) -> None:
        from cairn.index.milvus import Connection
        from cairn.schemas.config import MilvusConfig

        self.uri = uri
        self.connection = Connection.open(MilvusConfig(uri=uri), create=True)
        self.client = self.connection.client
        self.created: list[str] = []

    def collection(self, filled: bool = True) -> str:
        """A new scratch collection of Cairn's schema and indexes, loaded; FIRST then SECOND written, flushed apart."""
        from cairn.schemas.collection import build_index_params, build_schema

        name = f"cairn_conformance_{os.getpid()}_{len(self.created)}"
        schema = build_schema(DIM)
        if self.client.has_collection(name):
            self.client.drop_collection(name)
        self.created.append(name)
        self.client.create_collection(name, schema=schema)
        self.client.create_index(name, build_index_params())
        self.client.load_collection(name)
        if filled:
            for batch in (FIRST, SECOND):
                self.client.insert(name, rows(batch, schema))
                self.client.flush(name)
        return name

    def close(self) -> None:
        try:
            for alias in ("cairn_conformance_alias",):
                try:
                    self.client.drop_alias(alias)
                except Exception:  # noqa: BLE001 - not there
                    pass
            for name in self.created:
                if self.client.has_collection(name):
                    self.client.drop_collection(name)
        finally:
            self.connection.close()


def bm25(engine: Engine, name: str, text: str, where: str = 'tenant_id == "acme"') -> list[tuple[str, float]]:
    from cairn.schemas.collection import SPARSE_FIELD

    hits = engine.client.search(
        name, data=[text], anns_field=SPARSE_FIELD, limit=10, filter=where, output_fields=["chunk_id"]
    )
    return [(hit["chunk_id"], float(hit["distance"])) for hit in hits[0]]


def sign(scores: list[float]) -> str:
    if all(s < 0 for s in scores):
        return "negative"
    return "positive" if all(s > 0 for s in scores) else "mixed"


def bm25_sign_and_scale(engine: Engine, name: str) -> Observation:
    found = bm25(engine, name, "ledger replica")
    return {
        "order": [c for c, _ in found],
        "sign": sign([s for _, s in found]),
        "magnitudes": [round(abs(s), 4) for _, s in found],
    }


def bm25_idf(engine: Engine, name: str) -> Observation:
    """A word in one row of the tenant against a word in four: the rarer weighs more, by how much."""
    rare, common = bm25(engine, name, "restart"), bm25(engine, name, "ledger")
    top_rare, top_common = abs(rare[0][1]), max(abs(s) for _, s in common)
    return {
        "rare_rows": len(rare),
        "common_rows": len(common),
        "rare_over_common": top_rare > top_common,
        "ratio": round(top_rare / top_common, 3),
    }


def dense_cosine(engine: Engine, name: str) -> Observation:
    from cairn.schemas.collection import DENSE_FIELDS

    hits = engine.client.search(
        name, data=[vector(2)], anns_field=DENSE_FIELDS[1], limit=3, output_fields=["chunk_id"],
        search_params={"params": {"ef": 64}},
    )[0]  # fmt: skip
    return {"top": hits[0]["chunk_id"], "scores": [round(float(h["distance"]), 4) for h in hits]}


def filters_with_escaping(engine: Engine, name: str) -> Observation:
    from cairn.schemas.collection import access_filter, in_list, quote

    def ids(where: str) -> list[str]:
        return sorted(r["chunk_id"] for r in engine.client.query(name, filter=where, output_fields=["chunk_id"]))

    seen = {repr(title): ids(f"title == {quote(title)}") for title in HOSTILE}
    seen["acl like, hostile group"] = ids(access_filter("acme", [HOSTILE_GROUP]))
    seen["acl like, sre"] = ids(access_filter("acme", ["sre"]))
    seen["in list"] = ids(in_list("document_id", ["d1", "d3", 'no"such']))
    return seen


def partition_key(engine: Engine, name: str) -> Observation:
    described = engine.client.describe_collection(name)
    keyed = [f["name"] for f in described["fields"] if f.get("is_partition_key")]
    counted = {
        t: engine.client.query(name, filter=f'tenant_id == "{t}"', output_fields=["count(*)"])[0]["count(*)"]
        for t in TENANTS
    }
    other = bm25(engine, name, "ledger", 'tenant_id == "globex"')
    return {"partition_key": keyed, "rows_per_tenant": counted, "globex_bm25": [c for c, _ in other]}


def aliases_and_properties(engine: Engine, name: str) -> Observation:
    alias, other = "cairn_conformance_alias", engine.collection(filled=False)
    engine.client.create_alias(name, alias)
    first = engine.client.describe_alias(alias)["collection_name"] == name
    count = engine.client.query(alias, filter="", output_fields=["count(*)"])[0]["count(*)"]
    engine.client.alter_alias(other, alias)
    moved = engine.client.describe_alias(alias)["collection_name"] == other
    engine.client.drop_alias(alias)
    engine.client.alter_collection_properties(name, properties={"cairn.embedder": "probe"})
    props = engine.client.describe_collection(name).get("properties") or {}
    return {"alias_names": first, "rows_by_alias": count, "alter_alias": moved, "property": props.get("cairn.embedder")}


def group_by(engine: Engine, name: str) -> Observation:
    from cairn.schemas.collection import DENSE_FIELDS

    hits = engine.client.search(
        name, data=[vector(0)], anns_field=DENSE_FIELDS[1], limit=4, filter='tenant_id == "acme"',
        output_fields=["chunk_id", "document_id"], group_by_field="document_id",
    )[0]  # fmt: skip
    documents = [h["document_id"] for h in hits]
    return {"documents": documents, "one_per_document": len(documents) == len(set(documents))}


def upsert_and_delete(engine: Engine, name: str) -> Observation:
    from cairn.schemas.collection import build_schema

    changed = rows(FIRST, build_schema(DIM))[3]
    changed.update(text="invoice worker drained", search_text="invoice worker drained")
    engine.client.upsert(name, [changed])
    engine.client.delete(name, ids=["c3"])
    engine.client.flush(name)
    got = engine.client.get(name, ids=["c4", "c3"], output_fields=["chunk_id", "text"])
    return {
        "get": sorted((r["chunk_id"], r["text"]) for r in got),
        "rows": engine.client.query(name, filter="", output_fields=["count(*)"])[0]["count(*)"],
        "bm25 new text": [c for c, _ in bm25(engine, name, "drained")],
        "bm25 old text": [c for c, _ in bm25(engine, name, "restart")],
        "deleted by filter": engine.client.query(name, filter='document_id == "d2"', output_fields=["chunk_id"]),
    }


def iterators(engine: Engine, name: str) -> Observation:
    from cairn.index.milvus import quiet_lite_refusals

    seen: list[str] = []
    largest = 0
    with quiet_lite_refusals():  # Lite lacks the timestamp call an iterator asks for first; pymilvus falls back
        iterator = engine.client.query_iterator(
            name, batch_size=3, filter='tenant_id == "acme"', output_fields=["chunk_id"]
        )
        try:
            while page := iterator.next():
                seen += [r["chunk_id"] for r in page]
                largest = max(largest, len(page))
        finally:
            iterator.close()
    return {"rows": len(seen), "unique": len(set(seen)), "pages_within_batch": largest <= 3}


def hit_shape(engine: Engine, name: str) -> Observation:
    """What a hit holds: Cairn reads its row's fields and `distance` from it, keyed by the field names."""
    from cairn.schemas.collection import SPARSE_FIELD

    hit = engine.client.search(
        name, data=["ledger"], anns_field=SPARSE_FIELD, limit=1, output_fields=["chunk_id", "title"]
    )[0][0]
    keys = ("chunk_id", "id", "distance", "title", "entity")
    return {"keys": sorted(k for k in keys if k in hit), "title": hit.get("title")}


BEHAVIOURS: list[tuple[str, Callable[[Engine, str], Observation]]] = [
    ("BM25 score sign and scale", bm25_sign_and_scale),
    ("BM25 IDF", bm25_idf),
    ("dense cosine scale", dense_cosine),
    ("filters with escaping", filters_with_escaping),
    ("partition key", partition_key),
    ("aliases and collection properties", aliases_and_properties),
    ("group_by", group_by),
    ("hits keyed by the primary key", hit_shape),
    ("iterators", iterators),
    ("upsert and delete by id", upsert_and_delete),  # last: it changes the rows
]


def observe(engine: Engine) -> dict[str, Observation]:
    """Every behaviour on one engine (one collection for all, the writes last), or the error it raised."""
    name = engine.collection()
    seen: dict[str, Observation] = {}
    for label, probe in BEHAVIOURS:
        try:
            seen[label] = json.loads(json.dumps(probe(engine, name), default=str))
        except Exception as exc:  # noqa: BLE001 - a behaviour the engine lacks is a difference, not a crash
            seen[label] = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"}
    return seen


@contextmanager
def engine_at(uri: str) -> Iterator[Engine]:
    engine = Engine(uri)
    try:
        yield engine
    finally:
        engine.close()


def compare(uri: str) -> list[dict[str, Any]]:
    """Per behaviour: whether URI observed what the embedded engine observes, and both observations."""
    with tempfile.TemporaryDirectory(prefix="cairn-conformance-") as scratch:
        reference_uri = str(Path(scratch) / "reference.db")
        with engine_at(uri) as target:
            there = observe(target)
        with engine_at(reference_uri) as reference:
            here = observe(reference)
        from cairn.index import liteserver

        liteserver.stop(Path(reference_uri))
    return verdicts(there, here)


def verdicts(there: dict[str, Observation], here: dict[str, Observation]) -> list[dict[str, Any]]:
    """Per behaviour, in BEHAVIOURS' order: whether the URI observed what the embedded engine observed (never when
    the embedded engine itself failed it: the probe is broken, not the URI), and both observations."""
    return [
        {
            "behaviour": label,
            "same": there.get(label) == here.get(label) and "error" not in here.get(label, {"error": "not run"}),
            "uri": there.get(label),
            "embedded": here.get(label),
        }
        for label, _ in BEHAVIOURS
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uri", required=True, help="a Milvus Lite folder or http(s)://host:port of a Milvus server")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    args = parser.parse_args(argv)
    from cairn.errors import StoreError
    from cairn.redact import redact

    try:
        results = compare(args.uri)
    except StoreError as exc:
        print(f"conformance: {redact(str(exc))}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"uri": redact(args.uri), "behaviours": results}, indent=2, ensure_ascii=False))
    else:
        for result in results:
            print(f"{'PASS' if result['same'] else 'DIFF'}  {result['behaviour']}")
            if not result["same"]:
                print(f"      at the URI:   {json.dumps(result['uri'], ensure_ascii=False)}")
                print(f"      embedded:     {json.dumps(result['embedded'], ensure_ascii=False)}")
        differing = sum(not r["same"] for r in results)
        print(f"{len(results) - differing} of {len(results)} behaviours as on the embedded engine ({redact(args.uri)})")
    return 1 if any(not r["same"] for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
