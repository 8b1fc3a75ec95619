"""Where a search's time goes inside Milvus Lite: the engine opened in this process on an index folder (its Lite
server stopped first), each search form timed alone, and one search profiled by function.

    python -m bench.engine_profile FOLDER [--collection speed] [--repeat 7] [--profile]

FOLDER is a Lite index folder (`.../index/cairn.db`, e.g. one `bench.query_speed --work DIR` kept). Per form, the
median of --repeat searches: a dense top-50 with no filter, with the tenant only, with Cairn's access filter
(tenant + ACL `like` + is_current), with the ACL as ARRAY_CONTAINS_ANY; the same with only the primary key as
output field; BM25 alone likewise; a get of 8 and of 50 ids. --profile adds cProfile's top functions of a dense
and a BM25 search with the access filter. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import io
import json
import pstats
import statistics
import time
from pathlib import Path

import numpy as np

from cairn.schemas.collection import SEARCH_FIELDS  # what a search leg reads: the same fields as Cairn's


def timed(fn, repeat: int) -> float:
    fn()  # warm: indexes built or loaded, filter compiled
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return round(statistics.median(times), 1)


def profile(fn, top: int = 14) -> str:
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", type=Path)
    parser.add_argument("--collection", default="speed")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--tenant", default="acme")
    parser.add_argument("--groups", default="sre,payments")
    args = parser.parse_args()

    from milvus_lite.constants import PARTITION_KEY_BUCKET_PREFIX
    from milvus_lite.db import MilvusLite

    from cairn.index import liteserver
    from cairn.schemas.collection import access_filter

    liteserver.stop(args.folder.resolve())
    db = MilvusLite(str(args.folder))
    col = db.get_collection(args.collection)
    col.load()
    groups = args.groups.split(",")
    tenant_only = f'tenant_id == "{args.tenant}"'
    access = access_filter(args.tenant, groups) + " and is_current == true"
    array = f'tenant_id == "{args.tenant}" and ARRAY_CONTAINS_ANY(access_control_list, {json.dumps(groups)})'
    q = np.random.default_rng(1).standard_normal(384).astype(np.float32)
    q = (q / np.linalg.norm(q)).tolist()
    text = "kafka-lag ledger-restart dns-timeout primary"
    segments = col._segments_snapshot()
    out: dict = {
        "rows": col.num_entities,
        "segments": len(segments),
        "segment_rows": sorted((s.num_rows for s in segments), reverse=True)[:20],
        "ms": {},
    }

    # the partition-key bucket the tenant's rows are in (what a Milvus server prunes to; Lite searches them all)
    bucket = [f"{PARTITION_KEY_BUCKET_PREFIX}{int(hashlib.md5(args.tenant.encode()).hexdigest(), 16) % 16}"]

    def dense(expr, fields=SEARCH_FIELDS, field="full_text_embedding", partitions=None):
        return lambda: col.search(
            [q],
            top_k=50,
            expr=expr or None,
            output_fields=fields,
            anns_field=field,
            search_params={"ef": 100},
            partition_names=partitions,
        )

    def bm25(expr, fields=SEARCH_FIELDS, partitions=None):
        return lambda: col.search(
            [text],
            top_k=50,
            expr=expr or None,
            output_fields=fields,
            anns_field="text_sparse",
            partition_names=partitions,
        )

    forms = {
        "dense, a filter no row passes (the per-row bookkeeping alone)": dense('chunk_id == "-"'),
        "dense no filter": dense(""),
        "dense tenant": dense(tenant_only),
        "dense access (tenant+acl like+current)": dense(access),
        "dense tenant+ARRAY_CONTAINS_ANY": dense(array),
        "dense access, pk only": dense(access, ["chunk_id"]),
        "dense access, the tenant's partition only": dense(access, partitions=bucket),
        "dense no filter, pk only": dense("", ["chunk_id"]),
        "bm25, a filter no row passes (the per-row bookkeeping alone)": bm25('chunk_id == "-"'),
        "bm25 no filter": bm25(""),
        "bm25 access": bm25(access),
        "bm25 access, pk only": bm25(access, ["chunk_id"]),
        "bm25 access, the tenant's partition only": bm25(access, partitions=bucket),
    }
    for name, fn in forms.items():
        out["ms"][name] = timed(fn, args.repeat)
    ids = [r["id"] for r in col.search([q], top_k=50, output_fields=["chunk_id"], anns_field="full_text_embedding")[0]]
    out["ms"]["get 8 ids, all fields"] = timed(lambda: col.get(ids[:8]), args.repeat)
    out["ms"]["get 50 ids, all fields"] = timed(lambda: col.get(ids), args.repeat)
    out["ms"]["get 50 ids, 2 fields"] = timed(lambda: col.get(ids, output_fields=["chunk_id", "text"]), args.repeat)
    out["ms"]["count(*) access"] = timed(lambda: col.query(expr=access, output_fields=["count(*)"]), args.repeat)
    print(json.dumps(out, indent=1))
    if args.profile:
        print(profile(dense(access)))
        print(profile(bm25(access)))
    db.close()


if __name__ == "__main__":
    main()
