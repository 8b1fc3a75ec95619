"""Wiki Markdown from a folder or S3: one document per .md file, front matter over the source's defaults.

A folder page's version_hash is the sha256 of its normalised content; an S3 object's is its ETag (listing
is enough to skip unchanged pages, nothing is downloaded), and its LastModified is the default updated_at.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from urllib.parse import quote

from cairn.schemas import TEMPORAL_OPEN, ContentType, DocumentRef, Environment, Severity, SourceDocument, SourceType
from cairn.schemas.source_config import WikiSourceConfig
from cairn.sources import frontmatter as fm
from cairn.sources.base import DocumentError, DocumentRefused, NothingToIndex
from cairn.sources.blobsource import BlobSource


def normalise(raw: bytes) -> bytes:
    """What version_hash is taken over: no BOM, LF line ends (an editor's re-save changes nothing)."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    return raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def version_hash(raw: bytes) -> str:
    return hashlib.sha256(normalise(raw)).hexdigest()


class WikiSource(BlobSource[WikiSourceConfig]):
    kind = SourceType.WIKI
    suffixes = (".md", ".markdown")
    no_acl_advice = "declare 'acl' in front matter or a default acl on the source"

    def content_version(self, key: str) -> str:
        return version_hash(self.store.read_bytes(key))

    def load(self, ref: DocumentRef) -> SourceDocument:
        raw, blob = self.store.fetch(ref.locator, limit=self.max_bytes)  # DocumentError naming the page
        text = decode_markdown(ref.locator, raw)
        version = blob.version or version_hash(raw)  # what was read, even if it changed since discovery
        try:
            if not fm.has_content(text):
                raise NothingToIndex(ref.locator, fm.FRONT_MATTER_ONLY)
            meta, body = fm.split_front_matter(text)
            return self._document(ref, meta, body, version, blob.modified)
        except fm.AccessRefused as exc:  # the page asks for access its source does not grant
            raise DocumentRefused(ref.locator, str(exc)) from None
        except ValueError as exc:  # FrontMatterError and enum parse errors name the key
            raise DocumentError(ref.locator, str(exc)) from None

    def source_uri(self, locator: str) -> str:
        return self.config.uri_base + locator if self.config.uri_base else self.store.uri(locator)

    def _document(self, ref: DocumentRef, meta: dict, body: str, version: str, mtime: int) -> SourceDocument:
        grant = self.granted(ref.locator, *fm.narrowed_access(meta, self.config))
        # an author's date where the page has one (Hugo's lastmod and date, Jekyll's date), else the file's mtime;
        # never later than the run that reads it (flows/sync.py observed)
        authored = next((t for key in ("updated", "lastmod", "date") if (t := fm.timestamp(meta, key))), None)
        updated = authored or mtime
        heading = fm.H1.search(body)
        title = fm.string(meta, "title") or (heading.group(1).strip() if heading else Path(ref.locator).stem)
        return self.document(
            ref.locator,
            version,
            grant,
            source_uri=self.source_uri(ref.locator),
            title=title,
            content=body,
            content_type=ContentType.parse(fm.string(meta, "content_type"), ContentType.DOCUMENT),
            created_at=fm.timestamp(meta, "created") or fm.timestamp(meta, "date") or updated,
            updated_at=updated,
            temporal_start=fm.timestamp(meta, "valid_from") or updated,
            temporal_end=fm.timestamp(meta, "valid_until") or TEMPORAL_OPEN,
            service_name=fm.string(meta, "service") or self.config.service,
            environment=Environment.parse(fm.string(meta, "environment"), Environment.UNSPECIFIED),
            severity=Severity.parse(fm.string(meta, "severity"), Severity.UNSPECIFIED),
            tags=fm.string_list(meta, "tags") or [],
            doc_tag=fm.string(meta, "doc_tag") or "",
            extra=self.published(ref.locator, fm.string(meta, "url")),
        )

    def published(self, locator: str, url: str | None) -> dict[str, str]:
        """Where the page is published, for deep links (query/citations.py deep_link): its front matter `url`,
        else the source's link_template with the page's path; {anchor} left for the section's heading."""
        if url and not url.startswith(("https://", "http://")):
            url = None  # a link a person clicks: a web address only
        link = url or (self.config.link_template or "").replace("{path}", quote(locator, safe="/"))
        if not link:
            return {}
        return {"link": link, "anchor_style": self.config.anchor_style}


def decode_markdown(locator: str, raw: bytes) -> str:
    """UTF-8 text with LF line ends, or a DocumentError that says why not (NothingToIndex: an empty file)."""
    if not raw.strip():
        raise NothingToIndex(locator, "empty file (or only white space): nothing to index")
    if b"\x00" in raw[:8192]:
        raise DocumentError(locator, "binary file (contains NUL bytes), not Markdown")
    try:
        return normalise(raw).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentError(
            locator, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}); re-save it as UTF-8"
        ) from None
