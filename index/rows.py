"""Chunked documents -> Milvus rows with both dense vectors; embeds only texts the cache lacks.

Per section, the model sees each child's text (prefixed by title and breadcrumbs, since a child
alone often lacks the words that name its subject) and the section's abstract. Rows:
- child:     full_text_embedding = its own text; abstract_embedding = its section's abstract
- full_text: abstract_embedding = the abstract; full_text_embedding = normalised mean of its
             children's vectors, so all of a 400-900-token section counts despite the model's
             256-word-piece window.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from cairn.embedding import Encoder
from cairn.errors import RowError
from cairn.index.cache import EmbeddingCache, text_key
from cairn.schemas import ChunkType, Section, SourceDocument
from cairn.schemas.fields import ARRAY_FIELDS, ARRAY_ITEM_LENGTH, MAX_TEXT, VARCHAR_FIELDS, acl_key
from cairn.schemas.row_links import AgreementCard, ChildMarks, DocumentStamp, ParentLinks
from cairn.schemas.rows import ChunkRow, row_id, version_key


@dataclass
class ChunkedDocument:
    document: SourceDocument
    sections: list[Section]


@dataclass
class EmbedStats:
    texts: int = 0
    computed: int = 0
    model_seconds: float = 0.0  # spent in the model computing them (waiting for it, on Dask workers)
    documents: list[ChunkedDocument] = field(default_factory=list)  # those whose rows were built
    failed: list[tuple[str, str]] = field(default_factory=list)  # (locator, reason): documents that cannot be rows


def context_header(title: str, breadcrumbs: list[str]) -> str:
    trail = [b for b in breadcrumbs if b]
    if not trail or trail[0] != title:
        trail = [title, *trail]
    return " > ".join(trail)


def child_input(doc: SourceDocument, section: Section, text: str, alone: bool = False) -> str:
    """A child's model input and BM25 text: its context header, then its text. A child made of its own
    (an agreement's opening statement) also carries the document's card: what the source read from that very
    statement (name, date, parties), in words a question about them uses ("the date of the agreement"),
    which the statement itself rarely does ("made as of this 1st day of March")."""
    header = context_header(doc.title, section.breadcrumbs)
    card = document_card(doc) if alone else ""
    return f"{header}\n{card}\n{text}" if card else f"{header}\n{text}"


def document_card(doc: SourceDocument) -> str:
    """ "Name: CONSULTING AGREEMENT. Date: 2020-03-01. Parties: A; B." from the document's metadata, or ""."""
    card = AgreementCard.from_row({"extra": doc.extra})
    fields = [("Name", doc.title), ("Date", card.effective_date), ("Parties", "; ".join(card.parties))]
    return " ".join(f"{label}: {value}." for label, value in fields if value)


def abstract_input(doc: SourceDocument, section: Section) -> str:
    header = context_header(doc.title, section.breadcrumbs)
    return section.abstract if section.abstract.startswith(header) else f"{header}\n{section.abstract}"


TextsEmbedded = Callable[[int, int], None]  # (texts the model has embedded so far, of how many) in one call
SLICE_BATCHES = 4  # with a progress callback, the model is given this many batches at a time


def embed_texts(
    texts: list[str],
    encoder: Encoder,
    cache: EmbeddingCache,
    batch_size: int,
    stats: EmbedStats,
    on_texts: TextsEmbedded | None = None,
) -> list[np.ndarray]:
    """The vector of each text: from the cache, else from the model (what it computed is cached). `on_texts` is
    told how many of the missing texts the model has embedded, before the first and after each slice."""
    keys = [text_key(encoder.identity, t) for t in texts]
    known = cache.get_many(keys)
    missing = list(dict.fromkeys(k for k in keys if k not in known))
    if missing:
        text_of = dict(zip(keys, texts))
        inputs = [text_of[k] for k in missing]
        step = len(inputs) if on_texts is None else max(SLICE_BATCHES * batch_size, 1)
        started = time.perf_counter()
        vectors: list[np.ndarray] = []
        for start in range(0, len(inputs), step):
            if on_texts is not None:
                on_texts(start, len(inputs))
            vectors.extend(encoder.encode(inputs[start : start + step], batch_size=batch_size))
        if on_texts is not None:
            on_texts(len(inputs), len(inputs))
        stats.model_seconds += time.perf_counter() - started
        fresh = dict(zip(missing, vectors))
        cache.put_many(fresh)
        known.update(fresh)
    stats.texts += len(texts)
    stats.computed += len(missing)
    return [known[k] for k in keys]


def row_problem(item: ChunkedDocument, dim: int) -> str | None:
    """Why a document's rows would not fit the collection (checked before the model runs), or None."""
    zero = np.zeros(dim, dtype=np.float32)
    try:
        links = parent_links(item)
        for section in item.sections:
            section_rows(item.document, section, zero, [zero] * len(section.chunks), links[section.section_id])
    except RowError as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - a bug on one document's metadata must not cost the batch
        return f"unexpected {type(exc).__name__} while building rows: {exc}"
    return None


def build_rows(
    batch: list[ChunkedDocument],
    encoder: Encoder,
    cache: EmbeddingCache,
    batch_size: int,
    on_texts: TextsEmbedded | None = None,
) -> tuple[list[ChunkRow], EmbedStats]:
    """All rows for a batch of documents, embedding every missing text in one model call (in slices, each told to
    `on_texts`, when it is given). A document whose rows would not fit fails alone (stats.failed) and is neither
    embedded nor written."""
    stats = EmbedStats()
    for item in batch:
        problem = row_problem(item, encoder.dim)
        if problem:
            stats.failed.append((item.document.locator, problem))
        else:
            stats.documents.append(item)
    batch = stats.documents
    texts: list[str] = []
    for item in batch:
        for section in item.sections:
            texts.append(abstract_input(item.document, section))
            texts.extend(child_input(item.document, section, c.text, c.alone) for c in section.chunks)
    vectors = iter(embed_texts(texts, encoder, cache, batch_size, stats, on_texts))
    rows: list[ChunkRow] = []
    for item in batch:
        links = parent_links(item)
        for section in item.sections:
            abstract_vec = next(vectors)
            child_vecs = [next(vectors) for _ in section.chunks]
            rows.extend(section_rows(item.document, section, abstract_vec, child_vecs, links[section.section_id]))
    # Children before parents: a parent row is visible only once its children are (see index/ledger.py).
    rows.sort(key=lambda row: row.is_parent)
    return rows, stats


def _pooled(vectors: list[np.ndarray], fallback: np.ndarray) -> np.ndarray:
    if not vectors:
        return fallback
    mean = np.mean(np.stack(vectors), axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm > 0 else fallback


def doc_version_key(doc: SourceDocument) -> str:
    """The version key of a document's rows (schemas/rows.py version_key)."""
    return version_key(doc.version_hash, doc.is_current, doc.temporal_start)


def parent_chunk_id(doc: SourceDocument, section: Section) -> str:
    return row_id(doc.document_id, doc_version_key(doc), section.section_id)


def parent_links(item: ChunkedDocument) -> dict[str, ParentLinks]:
    """Per section, what its parent row records (schemas/row_links.py): its abstract and child count, and about the
    whole document the number of sections and child rows and the sections just before and after (section_order -+ 1)."""
    doc = item.document
    by_order = {section.section_order: parent_chunk_id(doc, section) for section in item.sections}
    children = sum(len(section.chunks) for section in item.sections)
    return {
        section.section_id: ParentLinks(
            abstract=section.abstract,
            abstract_token_count=section.abstract_token_count,
            child_count=len(section.chunks),
            section_count=len(item.sections),
            document_child_count=children,
            previous_section=by_order.get(section.section_order - 1, ""),
            next_section=by_order.get(section.section_order + 1, ""),
        )
        for section in item.sections
    }


def section_rows(
    doc: SourceDocument, section: Section, abstract_vec: np.ndarray, child_vecs: list[np.ndarray], links: ParentLinks
) -> list[ChunkRow]:
    """A section's parent row, then its children's, each checked against the collection's sizes (fit_row)."""
    parent_id = parent_chunk_id(doc, section)
    key = doc_version_key(doc)
    header = context_header(doc.title, section.breadcrumbs)
    base = document_row(doc)
    base.section_id = section.section_id
    base.parent_section_id = section.parent_section_id
    base.breadcrumbs = section.breadcrumbs
    base.section_level = section.section_level
    base.section_order = section.section_order
    base.quality_flags = section.quality_flags.as_dict()
    abstract = _floats(abstract_vec)
    rows = [
        replace(
            base,
            chunk_id=parent_id,
            parent_chunk_id="",
            chunk_type=ChunkType.FULL_TEXT.value,
            chunk_order=-1,
            token_count=section.token_count,
            text=section.text,
            search_text=f"{header}\n{section.text}",
            abstract_embedding=abstract,
            full_text_embedding=_floats(_pooled(child_vecs, abstract_vec)),
            extra=dict(base.extra, **section.extra, **links.to_row()),
        )
    ]
    for chunk, vector in zip(section.chunks, child_vecs):
        rows.append(
            replace(
                base,
                chunk_id=row_id(doc.document_id, key, section.section_id, chunk.order),
                parent_chunk_id=parent_id,
                chunk_type=ChunkType.CHILD.value,
                chunk_order=chunk.order,
                token_count=chunk.token_count,
                text=chunk.text,
                search_text=child_input(doc, section, chunk.text, chunk.alone),
                abstract_embedding=abstract,
                full_text_embedding=_floats(vector),
                extra=dict(base.extra, **section.extra, **ChildMarks(chunk.term, chunk.alone).to_row()),
            )
        )
    return [fit_row(row) for row in rows]


def _floats(vector: np.ndarray) -> list[float]:
    """A vector as the collection stores it: float32 values, as a list (what pymilvus sends)."""
    values: list[float] = np.asarray(vector, dtype=np.float32).tolist()
    return values


def document_row(doc: SourceDocument) -> ChunkRow:
    """The fields every row of a document shares."""
    if not doc.access_control_list:
        raise RowError("refusing to write a document with an empty access control list")
    return ChunkRow(
        document_id=doc.document_id,
        source_name=doc.source_name,
        source_type=doc.source_type.value,
        source_uri=doc.source_uri,
        locator=doc.locator,
        title=doc.title,
        content_type=doc.content_type.value,
        service_name=doc.service_name,
        environment=doc.environment.value,
        severity=doc.severity.value,
        tenant_id=doc.tenant_id,
        access_control_list=sorted(set(doc.access_control_list)),
        acl_key=acl_key(doc.access_control_list),
        version_hash=doc.version_hash,
        temporal_start=doc.temporal_start,
        temporal_end=doc.temporal_end,
        is_current=doc.is_current,
        created_at=doc.created_at,
        updated_at=doc.updated_at,
        tags=list(doc.tags),
        doc_tag=doc.doc_tag,
        extra=dict(doc.extra, **DocumentStamp.of(doc).to_row()),
    )


# Free text that may be long by nature: cut at the field's size (at a character boundary). Everything else is
# an identifier or metadata that must be stored exactly: over its size, the document fails and says why.
CLIPPED_TEXT = {"title": "…"}


def _clip(value: str, limit: int, mark: str = "") -> str:
    data = value.encode("utf-8")
    if len(data) <= limit:
        return value
    return data[: limit - len(mark.encode("utf-8"))].decode("utf-8", errors="ignore") + mark


def fit_row(row: ChunkRow) -> ChunkRow:
    """Check every string against the collection's byte limits: free text (title, text) is cut, an identifier
    or metadata value that does not fit is refused (RowError naming it), never clipped: two tenants, sources or
    ids must never become one."""
    for name, limit in VARCHAR_FIELDS.items():
        value = str(getattr(row, name))
        if name in CLIPPED_TEXT:
            setattr(row, name, _clip(value, limit, CLIPPED_TEXT[name]))
        elif len(value.encode("utf-8")) > limit:
            raise RowError(
                f"{name} is {len(value.encode('utf-8')):,} bytes, over the {limit:,} the index holds: {value[:60]!r}..."
            )
    row.text = _clip(row.text, MAX_TEXT)
    row.search_text = _clip(row.search_text, MAX_TEXT)
    for name, capacity in ARRAY_FIELDS.items():
        values = [str(v) for v in getattr(row, name)]
        if name == "breadcrumbs":  # headings: free text, the deepest ones dropped first
            row.breadcrumbs = [_clip(v, ARRAY_ITEM_LENGTH, "…") for v in values[:capacity]]
            continue
        if len(values) > capacity:
            raise RowError(f"{name} has {len(values)} values, over the {capacity} the index holds")
        too_long = [v for v in values if len(v.encode("utf-8")) > ARRAY_ITEM_LENGTH]
        if too_long:
            raise RowError(
                f"{name} value {too_long[0][:60]!r}... is over the {ARRAY_ITEM_LENGTH} bytes the index holds"
            )
    return row
