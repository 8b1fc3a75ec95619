"""A BEIR corpus through the normal pipeline: `cairn eval beir --corpus corpus.jsonl --queries Q --qrels R`.

Each corpus line {"_id", "title", "text"} becomes one Markdown page `<_id>.md` (H1 = the title) in a scratch
folder, read by the ordinary wiki source into a scratch Milvus Lite collection by the ingest flow. The page's
path relative to its source root is the corpus id, which is how `query.eval.corpus_id` matches qrels.
The scratch folder is kept: a second run re-uses it and, the pipeline being incremental, embeds nothing.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

TENANT, GROUP = "beir", "eval"
_SAFE_ID = re.compile(r"^[\w.\-]+$")


def page_name(corpus_id: str) -> str:
    """The file a corpus id is written to; ids with path or odd characters are refused (they could escape)."""
    if not _SAFE_ID.match(corpus_id) or corpus_id in (".", ".."):
        raise ValueError(f"BEIR corpus id {corpus_id!r} cannot name a page (letters, digits, . _ - only)")
    return f"{corpus_id}.md"


def write_pages(corpus: Path, pages: Path) -> int:
    """One page per corpus document; pages already holding the same text are left alone (no re-embedding)."""
    pages.mkdir(parents=True, exist_ok=True)
    count = 0
    with corpus.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                doc = json.loads(line)
                corpus_id, text = str(doc["_id"]), str(doc.get("text") or "")
            except (ValueError, KeyError) as exc:
                raise ValueError(f"{corpus}:{number}: not a BEIR corpus line ({exc})") from None
            title = " ".join(str(doc.get("title") or "").split()) or corpus_id
            body = f"# {title}\n\n{text.strip()}\n"
            path = pages / page_name(corpus_id)
            if not path.exists() or path.read_text(encoding="utf-8") != body:
                path.write_text(body, encoding="utf-8")
            count += 1
    if not count:
        raise ValueError(f"{corpus}: no documents")
    return count


def scratch_config(corpus: Path, work: Path | None = None) -> Path:
    """Pages and a config of their own under `work` (default data/index/beir/<corpus name>-<hash of its path>)."""
    corpus = corpus.resolve()
    if work is None:
        tag = hashlib.sha1(str(corpus).encode()).hexdigest()[:8]
        work = Path("data/index/beir") / f"{corpus.parent.name or 'corpus'}-{tag}"
    work = work.resolve()
    pages, index = work / "pages", work / "index"
    index.mkdir(parents=True, exist_ok=True)
    write_pages(corpus, pages)
    q = json.dumps
    config = work / "cairn.toml"
    config.write_text(
        "\n".join(
            [
                f"state_path = {q(str(index / 'state.sqlite'))}",
                "[milvus]",
                f"uri = {q(str(index / 'cairn.db'))}",
                'collection = "beir"',
                "[embedding]",
                f"cache_path = {q(str(index / 'embeddings.sqlite'))}",
                "[quality]",
                "on_ingest = false",
                f"report_dir = {q(str(work / 'reports'))}",
                "[[sources]]",
                'name = "beir"',
                'type = "wiki"',
                f"path = {q(str(pages))}",
                f"tenant = {q(TENANT)}",
                f"acl = [{q(GROUP)}]",
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    return config
