"""The headline numbers of bench/results/*.json against the goals of the production path, one line each.

    python -m bench.summary     (the last step of `make bench`)

It only reads what the benchmarks wrote; a missing result file is reported as not measured.
"""

from __future__ import annotations

import json

from bench.common import RESULTS


def _load(name: str) -> dict | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _line(label: str, value: str, goal: str = "", met: bool | None = None) -> str:
    verdict = "" if met is None else ("  met" if met else "  NOT met")
    return f"{label:74} {value:>22}  {goal}{verdict}"


def _on(result: dict) -> str:
    """Where a benchmark's Milvus was: results written before `--store` existed were all on a Lite file."""
    store = result.get("store") or {"kind": "lite"}
    return "Lite file" if store["kind"] == "lite" else f"server {store['uri']}"


def lines() -> list[str]:
    out = []
    runbooks = _load("runbooks")
    if runbooks:
        for corpus, entry in runbooks["corpora"].items():
            ratio = entry["median_throughput_ratio"]
            out.append(
                _line(
                    f"ingest / raw model throughput ({corpus}, {_on(runbooks)})",
                    f"{ratio:.3f}",
                    "goal >= 0.85",
                    ratio >= 0.85,
                )
            )
            if "median_ingest_path_ratio" in entry:
                path = entry["median_ingest_path_ratio"]
                out.append(
                    _line(
                        f"  the same without the {entry['median_quality_report_seconds']:.1f} s quality report",
                        f"{path:.3f}",
                        "goal >= 0.85",
                        path >= 0.85,
                    )
                )
    else:
        out.append(_line("ingest / raw model throughput", "not measured"))
    incremental = _load("incremental")
    if incremental:
        rerun = incremental["unchanged_reruns"]
        ratio, embedded = rerun["median_wall_ratio_to_first"], max(rerun["embeddings_computed"])
        out.append(
            _line(
                f"unchanged re-ingest / first ingest ({_on(incremental)})",
                f"{ratio:.4f}, {embedded} embeddings",
                "goal <= 0.03, 0",
                ratio <= 0.03 and embedded == 0,
            )
        )
    else:
        out.append(_line("unchanged re-ingest / first ingest", "not measured"))
    speed = _load("query_speed")
    if speed:
        for size in speed.get("sizes", []):
            ratio = size["retrieve_p95_ms"] / size["raw_hybrid_p95_ms"]
            out.append(
                _line(
                    f"retrieve() p95 at {size['rows']:,} rows / raw hybrid_search p95 ({_on(speed)})",
                    f"{size['retrieve_p95_ms']:.0f} / {size['raw_hybrid_p95_ms']:.0f} ms = {ratio:.2f}",
                    "goal <= 1.3",
                    ratio <= 1.3,
                )
            )
    else:
        out.append(_line("retrieve() latency", "not measured"))
    rss = _load("rss")
    if rss:
        ratio = rss["ratio_peak_rss"]
        out.append(_line(f"peak RSS ingesting 10x / 1x ({_on(rss)})", f"{ratio:.3f}", "goal <= 1.2", ratio <= 1.2))
    else:
        out.append(_line("peak RSS 10x / 1x", "not measured"))
    large = _load("large_pdf")
    if large:
        for label in ("long", "heavy"):
            entry = large[label]
            out.append(
                _line(
                    f"peak RSS over a {large['small']['pages']}-page PDF: {entry['pages']} pages, {entry['mb']} MB",
                    f"+{large[f'{label}_over_small_peak_mb']:.0f} MB",
                )
            )
    else:
        out.append(_line("peak RSS of long and large PDFs", "not measured"))
    embedding = _load("embedding")
    if embedding:
        out.append(_line("onnx-int8 / torch encode speed-up", f"{embedding['median_speedup']:.2f}x"))
        out.append(_line("onnx-int8 mean cosine to torch fp32", f"{embedding['cosine_to_fp32']['mean']:.4f}"))
        sweep = embedding.get("batch_size_sweep", {}).get("torch")
        if sweep:
            out.append(_line("torch texts/s by batch size", ", ".join(f"{k}: {v:.0f}" for k, v in sweep.items())))
    else:
        out.append(_line("embedding backends", "not measured"))
    scifact = _load("embedding_scifact")
    if scifact:
        for backend, entry in scifact.items():
            out.append(_line(f"SciFact nDCG@10 ({backend}, {entry['queries']} queries)", f"{entry['ndcg@10']:.3f}"))
    return out


def main() -> None:
    print("\n".join(lines()))


if __name__ == "__main__":
    main()
