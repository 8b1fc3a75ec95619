"""Upload a report folder to S3 (`[quality] report_uri = "s3://bucket/prefix"`) through boto3.

Endpoint and region: `[quality] s3_endpoint_url / s3_region` when set, else `[s3]`, else the standard AWS
environment/profile chain; credentials only ever from that chain.
"""

from __future__ import annotations

from pathlib import Path

from cairn.schemas.config import QualityConfig, S3Config


def split_uri(uri: str | None) -> tuple[str, str]:
    if not uri or not uri.startswith("s3://") or len(uri) <= 5:
        raise ValueError(f"report_uri {uri!r} must look like s3://bucket/prefix")
    bucket, _, prefix = uri[5:].partition("/")
    return bucket, prefix.strip("/")


def _base(folder: Path, config: QualityConfig) -> tuple[str, str]:
    bucket, prefix = split_uri(config.report_uri)
    return bucket, "/".join(p for p in (prefix, folder.name) if p)


def destination(folder: Path, config: QualityConfig) -> str:
    bucket, base = _base(folder, config)
    return f"s3://{bucket}/{base}/"


def upload_folder(folder: Path, config: QualityConfig, s3: S3Config | None = None) -> str:
    from cairn.sources.blobs import s3_client

    s3 = s3 or S3Config()
    bucket, base = _base(folder, config)
    client = s3_client(config.s3_endpoint_url or s3.endpoint_url, config.s3_region or s3.region, s3)
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            client.upload_file(str(path), bucket, f"{base}/{path.relative_to(folder).as_posix()}")
    return destination(folder, config)
