"""What the file sources (wiki, pdf) share: a connector over the files of a folder or an S3 prefix.

Discovery lists the store (sources/blobs.py): one document per file whose name ends in one of the connector's
`suffixes`. A file the store flags (outside the folder, a name that is not UTF-8) or one over the source's
max_file_bytes (by its listed size, unread: memory stays bounded) is a DiscoveryFailure. An S3 object's version
is its ETag (listing is enough to skip it unchanged); a folder file's is taken from its content by the connector
(`content_version`), and a file that cannot be read for it is a DiscoveryFailure with the reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar, TypeVar

from cairn.schemas import DocumentRef
from cairn.schemas.config import S3Config
from cairn.schemas.source_config import PdfSourceConfig, WikiSourceConfig
from cairn.sources.base import Connector, DiscoveryFailure, DocumentError
from cairn.sources.blobs import Blob, open_store

FilesConfigT = TypeVar("FilesConfigT", bound=WikiSourceConfig | PdfSourceConfig)


class BlobSource(Connector[FilesConfigT]):
    suffixes: ClassVar[tuple[str, ...]]

    def __init__(self, config: FilesConfigT, cursor: dict | None = None, s3: S3Config | None = None) -> None:
        super().__init__(config, cursor)
        self.store = open_store(config, s3)  # SourceError when neither path nor an s3:// uri is usable
        self.max_bytes = config.max_file_bytes

    def discover(self) -> Iterator[DocumentRef | DiscoveryFailure]:
        for blob in self.store.list(self.suffixes):
            if blob.problem:
                yield self.failure(blob.key, blob.problem)
                continue
            if blob.size > self.max_bytes:
                reason = f"file is {blob.size:,} bytes, over the source's max_file_bytes ({self.max_bytes:,})"
                yield self.failure(blob.key, reason)
                continue
            version = blob.version
            if version is None:  # a folder: the content is the version
                try:
                    version = self.content_version(blob.key)
                except DocumentError as exc:
                    yield self.failure(blob.key, exc.reason)
                    continue
            yield self.listed(blob, version)

    def content_version(self, key: str) -> str:
        """The version of a folder file, from its content; DocumentError naming it when it cannot be read."""
        raise NotImplementedError

    def listed(self, blob: Blob, version: str) -> DocumentRef:
        """The ref of a listed file at its store version (a connector may fold more into the version)."""
        return self.document_ref(blob.key, version)
