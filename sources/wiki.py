"""Wiki Markdown from a folder or S3: one document per .md file, front matter over the source's defaults.

A folder page's version_hash is the sha256 of its normalised content; an S3 object's is its ETag (listing
is enough to skip unchanged pages, nothing is downloaded), and its LastModified is the default updated_at.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterator

from cairn.schemas import TEMPORAL_OPEN, ContentType, DocumentRef, Environment, Severity, SourceDocument, SourceType, stable_id
from cairn.schemas.config import S3Config, WikiSourceConfig
from cairn.sources import frontmatter as fm
from cairn.sources.base import DiscoveryFailure, DocumentError
from cairn.sources.blobs import open_store

SUFFIXES = (".md", ".markdown")


def normalise(raw: bytes) -> bytes:
    """What version_hash is taken over: no BOM, LF line ends (an editor's re-save changes nothing)."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    return raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def version_hash(raw: bytes) -> str:
    return hashlib.sha256(normalise(raw)).hexdigest()


def document_id(source_name: str, locator: str) -> str:
    return stable_id(SourceType.WIKI.value, source_name, locator)


class WikiSource:
    complete = True

    def __init__(self, config: WikiSourceConfig, cursor: dict | None = None, s3: S3Config | None = None) -> None:
        self.name = config.name
        self.config = config
        self.store = open_store(config, s3)  # SourceError when neither path nor an s3:// uri is usable
        self.uri_base = config.uri_base
        self.max_bytes = config.max_file_bytes

    def discover(self) -> Iterator[DocumentRef | DiscoveryFailure]:
        for blob in self.store.list(SUFFIXES):
            locator = blob.key
            if blob.problem:
                yield DiscoveryFailure(locator, document_id(self.name, locator), blob.problem)
                continue
            if blob.size > self.max_bytes:  # refused by its listed size, before reading: memory stays bounded
                yield DiscoveryFailure(
                    locator, document_id(self.name, locator),
                    f"file is {blob.size:,} bytes, over the source's max_file_bytes ({self.max_bytes:,})",
                )
                continue
            version = blob.version
            if version is None:  # a folder: the content is the version
                try:
                    version = version_hash(self.store.read_bytes(locator))
                except DocumentError as exc:
                    yield DiscoveryFailure(locator, document_id(self.name, locator), exc.reason)
                    continue
            yield DocumentRef(self.name, locator, document_id(self.name, locator), version)

    def load(self, ref: DocumentRef) -> SourceDocument:
        raw, blob = self.store.fetch(ref.locator, limit=self.max_bytes)  # DocumentError naming the page
        text = decode_markdown(ref.locator, raw)
        version = blob.version or version_hash(raw)  # what was read, even if it changed since discovery
        try:
            meta, body = fm.split_front_matter(text)
            return self._document(ref, meta, body, version, blob.modified)
        except ValueError as exc:  # FrontMatterError and enum parse errors name the key
            raise DocumentError(ref.locator, str(exc)) from None

    def source_uri(self, locator: str) -> str:
        return self.uri_base + locator if self.uri_base else self.store.uri(locator)

    def _document(self, ref: DocumentRef, meta: dict, body: str, version: str, mtime: int) -> SourceDocument:
        if not body.strip():
            raise DocumentError(ref.locator, "no Markdown content after the front matter")
        tenant, acl = fm.narrowed_access(meta, self.config.tenant, self.config.acl, self.config.acl_ceiling)
        if not acl:
            raise DocumentError(
                ref.locator, "no access control list: declare 'acl' in front matter or a default acl on the source"
            )
        updated = fm.timestamp(meta, "updated") or mtime
        heading = fm.H1.search(body)
        title = fm.string(meta, "title") or (heading.group(1).strip() if heading else Path(ref.locator).stem)
        return SourceDocument(
            document_id=ref.document_id,
            source_name=self.name,
            source_type=SourceType.WIKI,
            source_uri=self.source_uri(ref.locator),
            locator=ref.locator,
            title=title,
            content=body,
            tenant_id=tenant,
            access_control_list=acl,
            content_type=ContentType.parse(fm.string(meta, "content_type"), ContentType.DOCUMENT),
            version_hash=version,
            created_at=fm.timestamp(meta, "created") or updated,
            updated_at=updated,
            temporal_start=fm.timestamp(meta, "valid_from") or updated,
            temporal_end=fm.timestamp(meta, "valid_until") or TEMPORAL_OPEN,
            service_name=fm.string(meta, "service") or self.config.service,
            environment=Environment.parse(fm.string(meta, "environment"), Environment.UNSPECIFIED),
            severity=Severity.parse(fm.string(meta, "severity"), Severity.UNSPECIFIED),
            tags=fm.string_list(meta, "tags") or [],
            doc_tag=fm.string(meta, "doc_tag") or "",
        )


def decode_markdown(locator: str, raw: bytes) -> str:
    """UTF-8 text with LF line ends, or a DocumentError that says why not."""
    if not raw.strip():
        raise DocumentError(locator, "empty file")
    if b"\x00" in raw[:8192]:
        raise DocumentError(locator, "binary file (contains NUL bytes), not Markdown")
    try:
        return normalise(raw).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentError(
            locator, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}); re-save it as UTF-8"
        ) from None
