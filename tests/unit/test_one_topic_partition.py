"""mm2 has one TopicPartition type; the Kafka client's partition object is ClientPartition, made at
the call into the client, so no module needs to import a second TopicPartition under an alias."""

from __future__ import annotations

import re
from pathlib import Path

import connect_core.kafka.types as kafka_types
from connect_core.model import TopicPartition
from mirror.client import formats

ROOT = Path(__file__).resolve().parents[2]


def test_the_product_and_the_runtime_name_the_same_type() -> None:
    assert formats.TopicPartition is TopicPartition
    tp = TopicPartition("orders", 3)
    assert str(tp) == "orders-3" and tp == ("orders", 3) and hash(tp) == hash(("orders", 3))
    assert not hasattr(kafka_types, "TopicPartition")  # the client's class goes by ClientPartition
    assert kafka_types.ClientPartition("orders", 3, 7).offset == 7


def test_no_module_aliases_a_second_topic_partition() -> None:
    aliased = re.compile(r"import\s+(?:\(\s*)?(?:[\w, \n]*,\s*)?TopicPartition\s+as\s+\w+")
    offenders = [
        str(path.relative_to(ROOT))
        for package in ("connect_core", "mirror", "bench")
        for path in (ROOT / package).rglob("*.py")
        if aliased.search(path.read_text(encoding="utf-8")) and path != ROOT / "connect_core/kafka/types.py"
    ]
    assert offenders == []
