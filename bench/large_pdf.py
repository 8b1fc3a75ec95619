"""Peak memory of ingesting a 300-page agreement and a 20 MB PDF, against a 6-page one (issue #22: large and
long documents ingest with bounded memory).

    python -m bench.large_pdf [--pages 300] [--mb 20] [--runs 2]

Three PDFs, written here with the tests' contract writer (tests/pdf_factory.py), each the only document of a
pdf source:
- small: the 6-page sample agreement (the baseline);
- long:  an agreement of `--pages` pages: articles of numbered sections with definitions and (a)/(i)
         clauses, text generated from a fixed seed;
- heavy: an agreement of about 40 pages whose every page also carries an image of random pixels
         (incompressible, a scan's weight), so the file is at least `--mb` MB while its text stays small.
Each ingest is `cairn ingest --json` in a fresh process with a fresh index (bench/rss.py `ingest`): the
kernel's peak RSS of the ingest process, and the polled peaks of its children (the PDF parse worker, the
Milvus Lite server, Prefect's server) and of the whole tree. Runs are interleaved, medians reported. Bounded
memory means: the long and heavy documents peak within a small margin of the small one (the model, Prefect
and Milvus are the floor; the document's own share is what grows).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

from bench.common import REPO, median, save, scratch_config
from bench.rss import ingest

sys.path.insert(0, str(REPO))
from tests import agreement_spec as spec_of
from tests import pdf_factory as pf

WORDS = (
    "the Supplier shall deliver services described in each Statement of Work within the period agreed by "
    "the parties and the Customer may terminate this Agreement upon written notice if any material breach "
    "remains uncured for thirty days after notice thereof including payment obligations confidentiality "
    "indemnification limitation of liability insurance audit rights assignment governing law"
).split()


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(14, 30))]
    return " ".join(words).capitalize() + "."


def _paragraph(rng: random.Random) -> str:
    return " ".join(_sentence(rng) for _ in range(rng.randint(3, 6)))


def long_spec(articles: int, seed: int = 22) -> spec_of.AgreementSpec:
    """An agreement of `articles` articles of 4 sections each (about 3.3 pages an article)."""
    rng = random.Random(seed)
    built = []
    for a in range(1, articles + 1):
        sections = []
        for s in range(1, 5):
            definitions = (
                {f"Term {a}-{d}": f", for purposes of Article {a}, {_sentence(rng).lower()}" for d in range(1, 4)}
                if s == 1
                else None
            )
            clauses = [
                spec_of.Clause(
                    f"({chr(96 + c)})", _sentence(rng), [(f"({'i' * r})", _sentence(rng)) for r in range(1, 3)]
                )
                for c in range(1, 4)
            ]
            sections.append(
                spec_of.Sect(
                    f"{a}.{s:02d}", f"Obligations {a}-{s}", [_paragraph(rng) for _ in range(2)], definitions, clauses
                )
            )
        built.append(spec_of.Article(str(a), f"ARTICLE TITLE {a}", sections))
    return spec_of.AgreementSpec(
        "Master Services Agreement",
        ["Acme Corp.", "Globex LLC"],
        "March 1, 2024",
        built,
        ["WHEREAS the parties wish to set out the terms of their relationship."],
    )


def write_long(path: Path, pages: int) -> int:
    """An agreement of at least `pages` pages; returns its page count."""
    per_article = _page_count(pf.render(long_spec(10))) / 10
    articles = max(1, round(pages / per_article))
    while True:
        pdf = pf.render(long_spec(articles))
        count = _page_count(pdf)
        if count >= pages:
            path.write_bytes(pdf)
            return count
        articles += max(1, round((pages - count) / per_article))


def write_heavy(path: Path, megabytes: float) -> int:
    """About 40 pages of agreement, each with an incompressible image, of at least `megabytes` MB."""
    spec = long_spec(8, seed=23)
    side = 400
    while True:
        data = _render_with_images(spec, side, path.parent)
        if len(data) >= megabytes * 1024 * 1024:
            path.write_bytes(data)
            return _page_count(data)
        side = int(side * (megabytes * 1024 * 1024 / len(data)) ** 0.5) + 8


def _render_with_images(spec: spec_of.AgreementSpec, side: int, scratch: Path) -> bytes:
    """The agreement's text with one side x side image of random pixels on every page (a scan's weight)."""
    from PIL import Image

    rng = random.Random(5)
    pdf = pf._ContractPDF(spec.running_header)
    running_header = pdf.header
    images: list[Path] = []

    def header() -> None:
        image = scratch / f"scan-{pdf.page_no()}.png"
        Image.frombytes("RGB", (side, side), rng.randbytes(side * side * 3)).save(image, compress_level=0)
        images.append(image)
        pdf.image(str(image), x=150, y=240, w=40, h=25)
        running_header()

    pdf.header = header  # type: ignore[method-assign]
    data = pf.render(spec, pdf)
    for image in images:
        image.unlink()
    return data


def _page_count(data: bytes) -> int:
    import pypdfium2

    document = pypdfium2.PdfDocument(data)
    try:
        return len(document)
    finally:
        document.close()


def config_for(work: Path, folder: Path) -> Path:
    work.mkdir(parents=True, exist_ok=True)
    source = {
        "name": "legal",
        "type": "pdf",
        "path": str(folder),
        "tenant": "bench",
        "acl": ["all"],
        "max_file_bytes": 200_000_000,
    }
    return scratch_config(work, [source])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--mb", type=float, default=20.0)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        files: dict[str, dict] = {}
        for label in ("small", "long", "heavy"):
            (tmp / label).mkdir()
        pf.write_sample(tmp / "small" / "small.pdf")
        files["small"] = {"pages": _page_count((tmp / "small" / "small.pdf").read_bytes())}
        files["long"] = {"pages": write_long(tmp / "long" / "long.pdf", args.pages)}
        files["heavy"] = {"pages": write_heavy(tmp / "heavy" / "heavy.pdf", args.mb)}
        for label in files:
            files[label]["mb"] = round((tmp / label / f"{label}.pdf").stat().st_size / 1024 / 1024, 2)
        prefect_home = tmp / "prefect-home"
        ingest(config_for(tmp / "warm", tmp / "small"), prefect_home)  # creates Prefect's database; not measured
        runs: dict[str, list[dict]] = {label: [] for label in files}
        for run in range(args.runs):
            for label in files:
                work = tmp / f"{label}-{run}"
                result = ingest(config_for(work, tmp / label), prefect_home)
                worker = [mb for name, mb in result["child_peaks_mb"].items() if "spawn_main" in name]
                server = [mb for name, mb in result["child_peaks_mb"].items() if "liteserver" in name]
                result["polled_parse_worker_mb"] = max(worker) if worker else None
                result["polled_lite_server_mb"] = max(server) if server else None
                runs[label].append(result)
                print(
                    f"{label} run {run + 1}: {files[label]['pages']} pages, {files[label]['mb']} MB: "
                    f"{result['peak_rss_mb']} MB peak, {result['seconds']} s, {result['chunks']} chunks, "
                    f"{result['failures']} failed",
                    file=sys.stderr,
                )
    out = {"runs": args.runs, "files": files}
    for label, measured in runs.items():
        out[label] = {
            **files[label],
            **{
                f"median_{k}": round(median([r[k] for r in measured if r.get(k) is not None] or [0]), 1)
                for k in (
                    "peak_rss_mb",
                    "polled_tree_sum_mb",
                    "polled_parse_worker_mb",
                    "polled_lite_server_mb",
                    "seconds",
                )
            },
            "chunks": measured[0]["chunks"],
            "failures": measured[0]["failures"],
            "runs": measured,
        }
    for label in ("long", "heavy"):
        out[f"{label}_over_small_peak_mb"] = round(
            out[label]["median_peak_rss_mb"] - out["small"]["median_peak_rss_mb"], 1
        )
    save("large_pdf", out)
    for label in files:
        o = out[label]
        print(
            f"{label:6} {o['pages']:4} pages {o['mb']:6.2f} MB: ingest peak {o['median_peak_rss_mb']} MB, "
            f"tree {o['median_polled_tree_sum_mb']} MB, parse worker {o['median_polled_parse_worker_mb']} MB, "
            f"{o['median_seconds']} s, {o['chunks']} chunks, {o['failures']} failed"
        )


if __name__ == "__main__":
    main()
