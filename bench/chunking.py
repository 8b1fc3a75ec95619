"""What chunking one big Markdown page costs, by shape and size (issue #36: a 2.2 MB page of nested lists took 40 s,
ten 4.5 MB pages did not finish in 10 minutes).

    python -m bench.chunking [--mb 1,2.5,5] [--shapes nested,deep,short_items,...] [--runs 1]

Each page is generated here from a fixed seed, to about the size asked, and chunked in this process exactly as an
ingest chunks a wiki page (markdown_units, then pack_sections: sections, abstracts, children, health), without
parsing front matter, embedding or writing. Shapes:
- nested:        a list nesting 8 levels deep and back, again and again (the issue's page);
- deep:          the same, 20 levels deep (markdown-it's limit), each level a list item too large for a section;
- short_items:   one list of tens of thousands of one-word items;
- long_items:    a list whose every item is a paragraph of 40 sentences;
- code_in_lists: list items each holding a fenced command and a nested list;
- tables:        headed sections of 50-row tables.
Printed per shape and size: seconds, ms per KB (flat across sizes = linear), sections, and the characters handed
to the tokenizer per character of the page (a count, not a time: what the unit test tests/unit/test_chunk_cost.py
holds to a bound). The first page pays the tokenizer's load (about a second): it is chunked once before timing.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from bench.common import median, save

WORDS = (
    "drain restart the worker queue lag settle ledger replica promote confirm dashboard error rate latency "
    "saturation pager escalate rollback deploy verify cluster node kafka consumer offset partition"
).split()


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def _lines(size: int, line: Callable[[random.Random, int], str], head: str) -> str:
    rng, out, total, n = random.Random(36), [head], 0, 0
    while total < size:
        text = line(rng, n)
        out.append(text)
        total, n = total + len(text), n + 1
    return "".join(out)


def nested(size: int, depth: int = 8) -> str:
    return _lines(size, lambda rng, n: "  " * (n % depth) + f"- step {n}: {_sentence(rng, 12)}\n", "# Plan\n\n")


def deep(size: int) -> str:
    return nested(size, depth=20)


def short_items(size: int) -> str:
    return _lines(size, lambda rng, n: f"- x{n}\n", "# Items\n\n")


def long_items(size: int) -> str:
    return _lines(size, lambda rng, n: "- " + " ".join(_sentence(rng, 15) for _ in range(40)) + "\n", "# Items\n\n")


def code_in_lists(size: int) -> str:
    def item(rng: random.Random, n: int) -> str:
        return (
            f"- step {n}: {_sentence(rng, 10)}\n\n  ```bash\n  kubectl rollout restart deploy/w{n}\n"
            f"  kubectl get pods -l app=w{n}\n  ```\n\n  - check {_sentence(rng, 8)}\n"
        )

    return _lines(size, item, "# Run\n\n")


def tables(size: int) -> str:
    def table(rng: random.Random, n: int) -> str:
        rows = ["| host | state | note |", "|---|---|---|"] + [
            f"| h{n}-{k} | up | {_sentence(rng, 6)} |" for k in range(50)
        ]
        return f"## Table {n}\n\n" + "\n".join(rows) + "\n\n"

    return _lines(size, table, "# Tables\n\n")


SHAPES: dict[str, Callable[[int], str]] = {
    "nested": nested,
    "deep": deep,
    "short_items": short_items,
    "long_items": long_items,
    "code_in_lists": code_in_lists,
    "tables": tables,
}


def chunk(text: str) -> tuple[float, int, int]:
    """Seconds to chunk `text`, its sections, and the characters handed to the tokenizer."""
    from cairn.chunkers import markdown_units, pack_sections
    from cairn.chunkers import tokens as tokens_module
    from cairn.schemas.config import ChunkingConfig

    config, counted = ChunkingConfig(), [0]
    encode = tokens_module._encoded_length

    def counting(piece: str) -> int:
        counted[0] += len(piece)
        return encode(piece)

    tokens_module._count.cache_clear()
    tokens_module._encoded_length = counting  # type: ignore[assignment]
    try:
        started = time.perf_counter()
        sections = pack_sections(markdown_units(text, config), "Page", config)
        return time.perf_counter() - started, len(sections), counted[0]
    finally:
        tokens_module._encoded_length = encode  # type: ignore[assignment]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", default="1,2.5,5", help="page sizes in MB, comma-separated")
    parser.add_argument("--shapes", default=",".join(SHAPES), help=f"of {', '.join(SHAPES)}")
    parser.add_argument("--runs", type=int, default=1, help="runs per page (the median is reported)")
    args = parser.parse_args()
    sizes = [float(mb) for mb in args.mb.split(",")]
    with open("/proc/loadavg") as handle:
        load = handle.read().split()[0]
    chunk(nested(50_000))  # the tokenizer's load, outside every timing
    rows = []
    for shape in args.shapes.split(","):
        for mb in sizes:
            text = SHAPES[shape](int(mb * 1024 * 1024))
            runs = [chunk(text) for _ in range(args.runs)]
            seconds, sections, counted = median([r[0] for r in runs]), runs[0][1], runs[0][2]
            row = {
                "shape": shape,
                "mb": round(len(text) / 1024 / 1024, 2),
                "seconds": round(seconds, 2),
                "ms_per_kb": round(seconds * 1000 / (len(text) / 1024), 2),
                "sections": sections,
                "tokenized_per_character": round(counted / len(text), 2),
            }
            rows.append(row)
            print(
                f"{shape:14} {row['mb']:5.2f} MB  {row['seconds']:7.2f} s  {row['ms_per_kb']:6.2f} ms/KB  "
                f"{sections:6} sections  {row['tokenized_per_character']:5.2f} tokenized/char",
                flush=True,
            )
    save("chunking", {"load_average_at_start": load, "runs": args.runs, "rows": rows}, echo=False)


if __name__ == "__main__":
    main()
