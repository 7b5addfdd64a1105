"""The durable broker's local S3 server (``embedded_kafka.s3_server``, moto's S3 service on its own).

What the broker's storage engine relies on: objects round-trip, listings by prefix in key order, and
conditional writes: create-only (If-None-Match: *) and compare-and-swap on the ETag (If-Match), with which
the broker's concurrent requests update its metadata without losing each other's changes (moto before
5.1.8 ignores If-Match on PutObject).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from embedded_kafka.object_store import MotoS3Server, bucket_name


@pytest.fixture(scope="module")
def server() -> Iterator[MotoS3Server]:
    s3 = MotoS3Server().start()
    try:
        yield s3
    finally:
        s3.stop()


def _client(server: MotoS3Server) -> Any:
    env = server.broker_env()
    return boto3.client(
        "s3",
        endpoint_url=server.endpoint,
        aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
        region_name=env["AWS_DEFAULT_REGION"],
    )


def _precondition_failed(error: ClientError) -> bool:
    return error.response.get("Error", {}).get("Code") == "PreconditionFailed"


def test_objects_listings_and_conditional_writes(server: MotoS3Server) -> None:
    s3, bucket = _client(server), server.create_bucket(bucket_name("s3-server"))
    for offset in (0, 10, 7):
        s3.put_object(Bucket=bucket, Key=f"p/0/records/{offset:020d}.batch", Body=b"batch %d" % offset)
    s3.put_object(Bucket=bucket, Key="p/1/records/00000000000000000000.batch", Body=b"other")
    assert server.list_keys(bucket, "p/0/records/") == [f"p/0/records/{o:020d}.batch" for o in (0, 7, 10)]
    assert s3.get_object(Bucket=bucket, Key="p/0/records/00000000000000000010.batch")["Body"].read() == b"batch 10"

    etag = s3.put_object(Bucket=bucket, Key="p/0/watermark.json", Body=b"1", IfNoneMatch="*")["ETag"]
    with pytest.raises(ClientError) as exists:
        s3.put_object(Bucket=bucket, Key="p/0/watermark.json", Body=b"2", IfNoneMatch="*")
    assert _precondition_failed(exists.value)
    s3.put_object(Bucket=bucket, Key="p/0/watermark.json", Body=b"3", IfMatch=etag)
    with pytest.raises(ClientError) as stale:
        s3.put_object(Bucket=bucket, Key="p/0/watermark.json", Body=b"4", IfMatch=etag)
    assert _precondition_failed(stale.value)
    assert s3.get_object(Bucket=bucket, Key="p/0/watermark.json")["Body"].read() == b"3"
