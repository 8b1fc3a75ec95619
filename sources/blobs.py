"""Where a file-based source reads from: a local folder (`path = "folder"`) or S3 (`uri = "s3://bucket/prefix"`).

Both stores list Blobs sorted by key (the path below the root or prefix, posix: the document locator) and
read them by key. S3 endpoint and region come from `[s3]`, overridden per source by `s3_endpoint_url` /
`s3_region`; credentials only ever from the standard AWS environment/profile chain (boto3's default),
never from the config file, and never in a message.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from cairn.schemas.config import S3Config
from cairn.schemas.source_config import PdfSourceConfig, WikiSourceConfig
from cairn.sources.base import DocumentError, FileStat, SourceError

Watch = Callable[[int], None]  # told how many entries a listing holds so far; raises SourceError to stop it


@dataclass(frozen=True)
class Blob:
    key: str  # path relative to the root/prefix, posix ("team/page.md"): the document locator
    size: int
    version: str | None  # S3: the ETag (quotes stripped); folder: None (the caller hashes the content)
    modified: int  # epoch seconds (S3 LastModified / file mtime)
    problem: str = (
        ""  # why it must not be read (outside the source's root, a name that is not UTF-8): reported, skipped
    )
    stat: FileStat | None = None  # a folder file as listed (what the version memo is keyed by); S3: None


def split_s3_uri(uri: str, what: str = "uri") -> tuple[str, str]:
    """("bucket", "prefix") from s3://bucket/prefix; the prefix has no leading or trailing slash."""
    if not uri.startswith("s3://") or len(uri) <= 5 or uri[5] == "/":
        raise ValueError(f"{what} {uri!r} must look like s3://bucket/prefix")
    bucket, _, prefix = uri[5:].partition("/")
    return bucket, prefix.strip("/")


def safe_endpoint(endpoint_url: str | None) -> str:
    """The endpoint for a message: no user:password@ part, ever."""
    if not endpoint_url:
        return "the AWS default endpoint"
    parts = urlsplit(endpoint_url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}" if parts.scheme else endpoint_url.rpartition("@")[2]


def s3_client(endpoint_url: str | None = None, region: str | None = None, s3: S3Config | None = None):
    """A boto3 S3 client; credentials from the default chain (environment, profile, instance role).

    Transient failures (503 SlowDown, other 5xx, throttling, timeouts, refused connections) are retried by
    botocore with capped exponential backoff and jitter, `[s3] retry_attempts` attempts in all. Each connection
    attempt waits `[s3] connect_timeout_seconds`, each socket read `read_timeout_seconds` (boto3 has no deadline
    for a whole answer: a source's listing is bounded as a whole by its listing_budget_seconds)."""
    import boto3
    from botocore.config import Config

    s3 = s3 or S3Config()
    return boto3.client(
        "s3",
        endpoint_url=endpoint_url,
        region_name=region,
        config=Config(
            connect_timeout=s3.connect_timeout_seconds,
            read_timeout=s3.read_timeout_seconds,
            retries={"total_max_attempts": s3.retry_attempts, "mode": s3.retry_mode},
        ),
    )


def printable_name(name: str) -> str:
    """A file name as text whatever its bytes: one that is not UTF-8 arrives with surrogate escapes, which
    cannot be encoded (hashed, stored, shown); its undecodable bytes are spelt as \\xNN instead."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


class FolderStore:
    """A local folder. Nothing outside it is read: a symbolic link that leads out of the folder (a file, or a
    folder the walk would enter) is listed as a problem, never followed.

    Each path is resolved at most once per read: the walk never enters a linked folder, so a plain file it meets
    is inside by construction and only symbolic links are resolved when listing; a read resolves its path once
    and opens what it resolved to. The root is resolved once per store."""

    def __init__(self, root: str | os.PathLike, source_name: str = "") -> None:
        self.root = Path(root)
        self.source_name = source_name
        self._real_root: Path | None = None

    def list(self, suffixes: tuple[str, ...], watch: Watch | None = None) -> Iterator[Blob]:
        """The files under the root whose names end in `suffixes`, sorted by key; `watch(count)` is told how many
        it holds as it walks (it raises to stop a listing past its source's caps, before it holds everything)."""
        if not self.root.is_dir():
            raise SourceError(f"source {self.source_name!r}: folder {self.root} does not exist")
        found = []
        start = len(os.path.join(self.root, ""))  # an entry's path is the root's, a separator, then its key
        for entry in self._walk():
            if os.path.splitext(entry.name)[1].lower() not in suffixes or not (entry.is_file() or entry.is_symlink()):
                continue
            key = entry.path[start:] if os.sep == "/" else entry.path[start:].replace(os.sep, "/")
            if not key.isascii() and key != printable_name(key):
                found.append(Blob(printable_name(key), 0, None, 0, "the file name is not valid UTF-8: rename it"))
                continue
            if entry.is_symlink() and self._resolved_inside(Path(entry.path)) is None:
                found.append(Blob(key, 0, None, 0, "a symbolic link to outside the source's folder: not read"))
                continue
            try:
                stat = entry.stat()  # links followed; for a plain file, the one stat call of the listing
            except OSError:  # vanished or unreadable: reading it reports why
                found.append(Blob(key, 0, None, 0))
                continue
            seen = FileStat(stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)
            found.append(Blob(key, stat.st_size, None, int(stat.st_mtime), stat=seen))
            if watch is not None:
                watch(len(found))
        yield from sorted(found, key=lambda b: b.key)

    def _walk(self) -> Iterator[os.DirEntry[str]]:
        """Every entry under the root but folders; symbolic links are listed, never entered. A folder that
        cannot be listed (unreadable, too deep for the system's path limit) fails the source: skipping it, as
        Path.rglob does, would make its documents look deleted."""
        pending = [str(self.root)]
        while pending:
            folder = pending.pop()
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        if entry.is_dir(follow_symlinks=False):
                            pending.append(entry.path)
                        else:
                            yield entry
            except OSError as exc:
                where = printable_name(os.path.relpath(folder, self.root))
                where = where if len(where) <= 160 else f"{where[:80]}...{where[-60:]} ({len(where):,} characters)"
                raise SourceError(
                    f"source {self.source_name!r}: cannot list the folder {where!r} under {self.root}: "
                    f"{exc.strerror or exc}; nothing was indexed or removed for this source"
                ) from None

    def _resolved_inside(self, path: Path) -> Path | None:
        """The path with its links followed when that stays inside the root; None when it leads out or
        cannot be resolved (a dangling link, a loop)."""
        try:
            if self._real_root is None:
                self._real_root = Path(os.path.realpath(self.root, strict=True))
            real = Path(os.path.realpath(path, strict=True))
        except (OSError, RuntimeError):
            return None
        return real if real.is_relative_to(self._real_root) else None

    def fetch(self, key: str, limit: int | None = None) -> tuple[bytes, Blob]:
        """The content and what it was read as (size, mtime); DocumentError naming the key on failure. The path
        is resolved again here, at read time (the folder may have changed since it was listed), and the file
        it resolved to is what is opened."""
        path = self.root / key
        try:
            os.stat(path)  # a missing file or a dangling link: said as such, not as a link to outside
        except OSError as exc:
            raise DocumentError(key, f"cannot read file: {exc.strerror}") from None
        real = self._resolved_inside(path)
        if real is None:
            raise DocumentError(key, "a symbolic link to outside the source's folder: not read")
        try:
            with open(real, "rb") as handle:
                stat = os.fstat(handle.fileno())
                if limit is not None and stat.st_size > limit:
                    raise DocumentError(key, f"file is {stat.st_size:,} bytes, over the limit ({limit:,})")
                raw = handle.read()
        except OSError as exc:
            raise DocumentError(key, f"cannot read file: {exc.strerror}") from None
        return raw, Blob(key, len(raw), None, int(stat.st_mtime))

    def read_bytes(self, key: str) -> bytes:
        return self.fetch(key)[0]

    @contextmanager
    def local_path(self, key: str) -> Iterator[Path]:
        path = self._resolved_inside(self.root / key)
        if path is None or not path.is_file():
            raise DocumentError(key, "cannot read file: no such file inside the source's folder")
        yield path

    def uri(self, key: str) -> str:
        return self.root.resolve().as_uri() + "/" + key


class S3Store:
    def __init__(self, uri: str, s3: S3Config, source_name: str = "", client=None) -> None:
        """`s3`: the endpoint, region, page size and retries in force for this source (its overrides applied)."""
        try:
            self.bucket, self.prefix = split_s3_uri(uri)
        except ValueError as exc:
            raise SourceError(f"source {source_name!r}: {exc}") from None
        self.source_name = source_name
        self.endpoint_url = s3.endpoint_url
        self.page_size = s3.page_size
        self.s3 = s3
        self.client = client or s3_client(s3.endpoint_url, s3.region, s3)

    @property
    def root_uri(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}".rstrip("/")

    def _full_key(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    def list(self, suffixes: tuple[str, ...], watch: Watch | None = None) -> Iterator[Blob]:
        """The objects under the prefix whose keys end in `suffixes`, sorted by key; `watch(count)` is told how
        many it holds after each page (it raises to stop a listing past its source's caps)."""
        prefix = f"{self.prefix}/" if self.prefix else ""
        paginator = self.client.get_paginator("list_objects_v2")
        found = []
        try:
            pages = paginator.paginate(Bucket=self.bucket, Prefix=prefix, PaginationConfig={"PageSize": self.page_size})
            for page in pages:
                for obj in page.get("Contents", []):
                    key = obj["Key"][len(prefix) :]
                    if not key or key.endswith("/") or Path(key).suffix.lower() not in suffixes:
                        continue
                    found.append(
                        Blob(key, int(obj["Size"]), obj["ETag"].strip('"'), int(obj["LastModified"].timestamp()))
                    )
                if watch is not None:
                    watch(len(found))
        except SourceError:
            raise  # the watch's: a cap met
        except Exception as exc:  # noqa: BLE001  botocore's hierarchy is wide; each case gets its own advice
            raise SourceError(
                f"source {self.source_name!r}: cannot list {self.root_uri}/: {self._explain(exc)}"
            ) from None
        yield from sorted(found, key=lambda b: b.key)  # S3 lists in UTF-8 byte order already; keep it certain

    def _explain(self, exc: Exception) -> str:
        from botocore.exceptions import (
            ClientError,
            EndpointConnectionError,
            NoCredentialsError,
            PartialCredentialsError,
            ReadTimeoutError,
        )

        endpoint = safe_endpoint(self.endpoint_url)
        if isinstance(exc, ClientError):
            code = str(exc.response.get("Error", {}).get("Code", ""))
            transient = _transient(exc, code)
            if transient:
                return transient
            if code == "NoSuchBucket":
                return (
                    f"bucket {self.bucket!r} does not exist at {endpoint}; "
                    "check the bucket name in the source's uri and the S3 endpoint ([s3] endpoint_url)"
                )
            if code in (
                "AccessDenied",
                "403",
                "InvalidAccessKeyId",
                "SignatureDoesNotMatch",
                "ExpiredToken",
                "AllAccessDisabled",
            ):
                return (
                    f"access denied ({code}); check the AWS credentials in the environment or profile "
                    f"and that they may s3:ListBucket / s3:GetObject on bucket {self.bucket!r}"
                )
            if code in (
                "PermanentRedirect",
                "AuthorizationHeaderMalformed",
                "301",
                "IllegalLocationConstraintException",
            ):
                return f"the bucket is in another region ({code}); set [s3] region or the source's s3_region"
            return f"S3 error {code or 'unknown'}; check the endpoint ({endpoint}), region and credentials"
        if isinstance(exc, (NoCredentialsError, PartialCredentialsError)):
            return (
                "no usable AWS credentials; set AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or AWS_PROFILE "
                "in the environment (never in the config file)"
            )
        if isinstance(exc, ReadTimeoutError):
            attempts = self.s3.retry_attempts
            return (
                f"no answer from {endpoint} within [s3] read_timeout_seconds ({self.s3.read_timeout_seconds:g} s) "
                f"after {attempts} attempt{'s' if attempts != 1 else ''}; check the endpoint and the network, or "
                "raise read_timeout_seconds"
            )
        if isinstance(exc, EndpointConnectionError) or "connect" in type(exc).__name__.lower():
            return (
                f"cannot reach the S3 endpoint {endpoint}; check [s3] endpoint_url (or the source's s3_endpoint_url) "
                "and the network"
            )
        return f"{type(exc).__name__}; check the endpoint ({endpoint}), region and credentials"

    def _object_error(self, key: str, exc: Exception) -> DocumentError:
        from botocore.exceptions import ClientError

        if isinstance(exc, ClientError):
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in ("NoSuchKey", "404"):
                return DocumentError(key, f"{self.uri(key)} no longer exists (removed since listing)")
            if code in ("AccessDenied", "403"):
                return DocumentError(
                    key, f"access denied reading {self.uri(key)}; check s3:GetObject for these credentials"
                )
            why = _transient(exc, code) or f"S3 error {code or 'unknown'}"
            return DocumentError(key, f"cannot read {self.uri(key)}: {why}")
        return DocumentError(key, f"cannot read {self.uri(key)}: {self._explain(exc)}")

    def fetch(self, key: str, limit: int | None = None) -> tuple[bytes, Blob]:
        """The content and what was read (its own ETag and LastModified, not the listing's)."""
        try:
            response = self.client.get_object(Bucket=self.bucket, Key=self._full_key(key))
            size = int(response.get("ContentLength", 0))
            if limit is not None and size > limit:
                response["Body"].close()
                raise DocumentError(key, f"object is {size:,} bytes, over the limit ({limit:,})")
            raw = response["Body"].read()
        except DocumentError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise self._object_error(key, exc) from None
        blob = Blob(key, len(raw), response["ETag"].strip('"'), int(response["LastModified"].timestamp()))
        return raw, blob

    def read_bytes(self, key: str) -> bytes:
        return self.fetch(key)[0]

    @contextmanager
    def local_path(self, key: str) -> Iterator[Path]:
        """The object streamed (never whole in memory) into a temporary file, removed afterwards."""
        handle = tempfile.NamedTemporaryFile(prefix="cairn-", suffix=Path(key).suffix, delete=False)
        path = Path(handle.name)
        try:
            try:
                with handle:
                    self.client.download_fileobj(self.bucket, self._full_key(key), handle)
            except Exception as exc:  # noqa: BLE001
                raise self._object_error(key, exc) from None
            yield path
        finally:
            path.unlink(missing_ok=True)

    def uri(self, key: str) -> str:
        return f"{self.root_uri}/{key}"


_TRANSIENT_CODES = {
    "SlowDown",
    "ServiceUnavailable",
    "InternalError",
    "RequestTimeout",
    "Throttling",
    "ThrottlingException",
    "RequestLimitExceeded",
    "TooManyRequestsException",
    "500",
    "502",
    "503",
    "504",
}


def _transient(exc, code: str) -> str | None:
    """What to say when S3 kept answering with a retryable error until botocore's attempts ran out."""
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    if code not in _TRANSIENT_CODES and not (isinstance(status, int) and status >= 500):
        return None
    attempts = int(exc.response.get("ResponseMetadata", {}).get("RetryAttempts", 0)) + 1
    return (
        f"S3 kept answering {code or 'an error'}"
        + (f" (HTTP {status})" if status else "")
        + f" after {attempts} attempt{'s' if attempts != 1 else ''} with backoff: throttled or unavailable; "
        "the next run tries again, or raise [s3] retry_attempts"
    )


def open_store(config: WikiSourceConfig | PdfSourceConfig, s3: S3Config | None = None) -> FolderStore | S3Store:
    """The store behind a source: `path` is a folder, `uri = "s3://bucket/prefix"` is S3 (the model has checked
    that exactly one is set); the source's s3_endpoint_url / s3_region override [s3]."""
    if config.path:
        return FolderStore(config.path, config.name)
    assert config.uri, "a files source without a path has a uri (the config model checks it)"
    s3 = (s3 or S3Config()).model_copy(
        update={
            "endpoint_url": config.s3_endpoint_url or (s3.endpoint_url if s3 else None),
            "region": config.s3_region or (s3.region if s3 else None),
        }
    )
    return S3Store(config.uri, s3, source_name=config.name)
