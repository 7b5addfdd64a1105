"""Pure parts of the durable engine: bucket names S3 accepts, storage kinds the cluster accepts."""

from __future__ import annotations

import re

import pytest

from embedded_kafka import EmbeddedKafkaCluster
from embedded_kafka.object_store import bucket_name

_VALID_BUCKET = re.compile(r"^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$")


@pytest.mark.parametrize("prefix", ["tansu-A", "Tansu_Cluster.B/x", "", "-", "x" * 200])
def test_bucket_names_are_valid_and_fresh(prefix: str) -> None:
    first, second = bucket_name(prefix), bucket_name(prefix)
    assert _VALID_BUCKET.match(first), first
    assert first != second


def test_unknown_storage_is_refused() -> None:
    with pytest.raises(ValueError, match="'memory' or 's3'"):
        EmbeddedKafkaCluster("A", storage="disk")  # type: ignore[arg-type]
    assert EmbeddedKafkaCluster("A").storage == "memory"
