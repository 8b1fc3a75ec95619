"""What the file sources (wiki, pdf) share: a connector over the files of a folder or an S3 prefix.

Discovery lists the store (sources/blobs.py): one document per file whose name ends in one of the connector's
`suffixes`. A file the store flags (outside the folder, a name that is not UTF-8) or one over the source's
max_file_bytes (by its listed size, unread: memory stays bounded) is a DiscoveryFailure. An S3 object's version
is its ETag (listing is enough to skip it unchanged); a folder file's is taken from its content by the connector
(`content_version`), and a file that cannot be read for it is a DiscoveryFailure with the reason.

A folder file is read for its version only when its stat moved: the version memo (sources/base.py VersionMemo,
kept by the flow between runs) gives back the version last read for the same (size, mtime_ns, ctime_ns, inode).
A file whose ctime is under SETTLE_NS old when read is not remembered: a write in the same timestamp tick after
the read could leave its stat unchanged (git's "racy" entries); the next run reads it again.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import ClassVar, TypeVar

from cairn.schemas import DocumentRef
from cairn.schemas.config import S3Config
from cairn.schemas.source_config import PdfSourceConfig, WikiSourceConfig
from cairn.sources.base import Connector, DiscoveryFailure, DocumentError, FileStat, NoMemo, VersionMemo
from cairn.sources.blobs import Blob, open_store

SETTLE_NS = 2_000_000_000  # covers the coarsest timestamps met (FAT's 2 s); ext4, xfs, tmpfs tick in ms
FilesConfigT = TypeVar("FilesConfigT", bound=WikiSourceConfig | PdfSourceConfig)


class BlobSource(Connector[FilesConfigT]):
    suffixes: ClassVar[tuple[str, ...]]

    def __init__(
        self,
        config: FilesConfigT,
        cursor: dict | None = None,
        s3: S3Config | None = None,
        memo: VersionMemo | None = None,
    ) -> None:
        super().__init__(config, cursor)
        self.store = open_store(config, s3)  # SourceError when neither path nor an s3:// uri is usable
        self.max_bytes = config.max_file_bytes
        self.memo: VersionMemo = memo or NoMemo()

    def discover(self) -> Iterator[DocumentRef | DiscoveryFailure]:
        for blob in self.store.list(self.suffixes, watch=self.check_listing):
            if blob.problem:
                yield self.failure(blob.key, blob.problem)
                continue
            if blob.size > self.max_bytes:
                reason = f"file is {blob.size:,} bytes, over the source's max_file_bytes ({self.max_bytes:,})"
                yield self.failure(blob.key, reason)
                continue
            try:
                version = blob.version if blob.version is not None else self._folder_version(blob.key, blob.stat)
            except DocumentError as exc:
                yield self.failure(blob.key, exc.reason)
                continue
            yield self.listed(blob, version)

    def _folder_version(self, key: str, stat: FileStat | None) -> str:
        """A folder file's version: remembered when its stat did not move, else read (and remembered)."""
        known = self.memo.get(key, stat) if stat is not None else None
        if known is not None:
            return known
        version = self.content_version(key)
        if stat is not None and time.time_ns() - stat.ctime_ns >= SETTLE_NS:
            self.memo.put(key, stat, version)
        return version

    def content_version(self, key: str) -> str:
        """The version of a folder file, from its content; DocumentError naming it when it cannot be read."""
        raise NotImplementedError

    def listed(self, blob: Blob, version: str) -> DocumentRef:
        """The ref of a listed file at its store version (a connector may fold more into the version)."""
        return self.document_ref(blob.key, version)
