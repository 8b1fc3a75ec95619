"""The table bench.scale prints and README and docs/benchmarks.md show: the sizes measured side by side."""

from __future__ import annotations

MEASURES = [  # (label, format of one size's results) for the printed table
    ("rows", "{rows:,}"),
    ("embeddings", "{first_ingest[embeddings]}"),
    ("first ingest, wall s (ms/document)", "{first_ingest[wall_seconds]:.1f} ({first_ingest[ms_per_document]})"),
    (
        "the model alone on its texts, s (wall/model; overhead/model)",
        "{first_ingest[model_seconds]} ({first_ingest[wall_over_model]}; {first_ingest[overhead_over_model]})",
    ),
    ("unchanged re-run, ms/document", "{unchanged[ms_per_document]}"),
    ("the same with the index server stopped first, s", "{unchanged_cold_index:.1f}"),
    (
        "1% edited + 1% deleted, median of the rounds: wall s (the run's model s; wall/model)",
        "{edit[wall_seconds]:.1f} ({edit[run_model_seconds]}; {edit[wall_over_run_model]})",
    ),
    (
        "the same against the model alone afterwards: model s (wall/model)",
        "{edit[model_seconds]} ({edit[wall_over_model]})",
    ),
    ("the same: rounds within 2x the run's model + 3 s", "{edit[within_goal]} of {edit[round_count]}"),
    ("`cairn status`, s", "{status[wall_seconds]:.1f}"),
    ("`cairn reconcile`, s", "{reconcile[wall_seconds]:.1f}"),
    ("`cairn report` (over what changed: rows checked now), s", "{report[wall_seconds]:.1f} ({report[checked_now]:,})"),
    ("`cairn report --scan` (every row read and checked), s", "{report_scan[wall_seconds]:.1f}"),
    ("`cairn status`, index server cold, s", "{status_cold_index[wall_seconds]:.1f}"),
    ("retrieve p50 / p95, ms", "{retrieve[p50_ms]} / {retrieve[p95_ms]}"),
    (
        "brute-force limit p50 / p95, ms (retrieve p95 / limit p95)",
        "{retrieve[brute_p50_ms]} / {retrieve[brute_p95_ms]} ({retrieve[p95_over_brute_p95]}x)",
    ),
    ("index server peak memory, MB (KB/row)", "{server_peak_rss_mb:,.0f} ({server_kb_per_row})"),
    ("disk, MB (Milvus / index folder)", "{disk_mb[milvus]:,.0f} / {disk_mb[index_folder]:,.0f}"),
]


def table(results: dict) -> str:
    """The sizes measured so far side by side, one line per measure (Markdown; "-": not measured)."""

    def cell(template: str, size: dict) -> str:
        try:
            return template.format(**size)
        except (KeyError, TypeError, ValueError):
            return "-"

    sizes = results["sizes"]
    head = f"| {results['store']['kind']} store | " + " | ".join(f"{s['pages']:,} pages" for s in sizes) + " |"
    rows = [f"| {label} | " + " | ".join(cell(t, s) for s in sizes) + " |" for label, t in MEASURES]
    return "\n".join([head, "|---|" + "---|" * len(sizes), *rows])
