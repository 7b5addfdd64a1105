"""``mm2 run`` copies the source's record batches as bytes (issue 37), and falls back to the record path in order.

* Stock settings (the batch path is the default), every codec, awkward records (null keys, null and
  empty values, a value of several hundred KB, repeated and null headers, old explicit timestamps): the
  target holds the same records per partition in order, and its batches' record bytes (after the
  61-byte header) are the source's, with valid CRCs (read raw on both sides by the test's own reader).
* Per-batch fallbacks inside one partition - a batch above the target topic's max.message.bytes and a
  LogAppendTime batch between batches the batch path passes - keep source order on the target.
* The batch path's clients get the flow's TLS / mutual TLS settings (Java stores).
* Per-flow fallbacks: a flow with a transform (and predicate) and a flow with a non-byte-array converter
  use the record path, say so in their log and in ``mm2 status``, and still copy every record.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka.record._crc32c import crc as pure_python_crc32c  # type: ignore[import-untyped]
from kafka.record.default_records import DefaultRecordBatchBuilder  # type: ignore[import-untyped]

from connect_core.kafka.batch_producer import BatchProducer
from connect_core.kafka.record_batch import split_batches
from embedded_kafka import KafkaCluster
from tests.e2e.mm2_helpers import (
    Mm2Process,
    eventually,
    mirrored_identically,
    mm2_properties,
    now_ms,
    status_json,
    write_properties,
)
from tests.e2e.test_mm2_tls import java_mutual_tls, java_tls
from tests.raw_batch_bytes import data_batches
from tests.tls_brokers import TlsCluster
from tests.tls_pki import Pki, shared_pki

STARTUP_S = 120.0
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
BIG_VALUE = bytes(range(256)) * 1200  # ~300 KB


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return shared_pki(tmp_path_factory)


@pytest.fixture
def tls_clusters(pki: Pki, tmp_path: Path) -> Iterator[Callable[..., TlsCluster]]:
    started: list[TlsCluster] = []

    def start(name: str, **kwargs: object) -> TlsCluster:
        cluster = TlsCluster(name, tmp_path, pki, **kwargs)  # type: ignore[arg-type]
        started.append(cluster)
        return cluster.start()

    try:
        yield start
    finally:
        for cluster in started:
            cluster.stop()


def _write_awkward(cluster: KafkaCluster, topic: str, codec: str, partitions: int) -> None:
    """Batches of several records per partition, each kind of awkward record in them."""
    producer = cluster.producer(
        **{"linger.ms": 100, "batch.num.messages": 10_000, "compression.type": codec, "message.max.bytes": 2_000_000}
    )
    old = now_ms() - 30 * 24 * 3600 * 1000  # a month ago
    for group in range(3):
        for i in range(12):
            n = group * 12 + i
            value: bytes | None = b"value %d " % n * (1 + n % 5)
            if n % 7 == 3:
                value = None
            elif n % 11 == 4:
                value = b""
            elif n == 20:
                value = BIG_VALUE
            producer.produce(
                topic,
                value=value,
                key=None if n % 3 == 0 else b"key-%d" % n,
                partition=n % partitions,
                timestamp=old + n,
                headers=[("h", b"1"), ("h", b"2"), ("empty", None)],
            )
        assert producer.flush(30) == 0  # a batch boundary per group


def _check_bytes_equal(source: KafkaCluster, topic: str, target: KafkaCluster, remote: str, partition: int) -> None:
    src = data_batches(source.bootstrap_servers, topic, partition)
    dst = data_batches(target.bootstrap_servers, remote, partition)
    assert src and all(b.crc_ok for b in src)
    assert all(b.crc_ok for b in dst), f"{remote}-{partition}: a target batch has a wrong CRC"
    assert [b.records for b in dst] == [b.records for b in src], f"{remote}-{partition}: record bytes differ"
    assert [(b.attributes & 0x07, b.record_count, b.base_timestamp, b.max_timestamp) for b in dst] == [
        (b.attributes & 0x07, b.record_count, b.base_timestamp, b.max_timestamp) for b in src
    ]


def test_every_codec_is_copied_byte_for_byte(two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path) -> None:
    a, b = two_clusters
    topics = {codec: a.create_topic(f"bytes-{codec}", 2) for codec in CODECS}
    for codec, topic in topics.items():
        _write_awkward(a, topic, codec, 2)
    config = write_properties(
        tmp_path / "mm2.properties", mm2_properties({"A": a, "B": b}, ["A->B"], topics="bytes-.*")
    )
    mm2 = Mm2Process(config, log_dir=tmp_path)
    try:
        for topic in topics.values():
            eventually(
                lambda t=topic: mirrored_identically(a, t, b, f"A.{t}", at_least=36),
                STARTUP_S,
                f"A.{topic} on B",
                mm2,
                interval=1.0,
            )
        for topic in topics.values():
            for partition in (0, 1):
                _check_bytes_equal(a, topic, b, f"A.{topic}", partition)
        flow = next(f for f in status_json(config)["flows"] if f["flow"] == "A->B")
        assert flow["copy_path"] == "batch"
        assert "(batch path)" in mm2.output()
        assert mm2.terminate() == 0
    finally:
        mm2.close()


def _log_append_time_batch(values: list[bytes]) -> Any:
    """A v2 batch with the LogAppendTime attribute (clients never send one; a broker's log can hold one)."""
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=0,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 20,
    )
    for i, value in enumerate(values):
        builder.append(i, timestamp=1_000_000 + i, key=None, value=value, headers=[])
    data = bytearray(builder.build())
    attributes = struct.unpack_from(">h", data, 21)[0] | 0x08
    struct.pack_into(">h", data, 21, attributes)
    struct.pack_into(">I", data, 17, pure_python_crc32c(bytes(data[21:])))
    (batch,) = split_batches(bytes(data))
    return batch


def test_batches_the_batch_path_cannot_pass_keep_their_place(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    """small batch (bytes) | batch above max.message.bytes (records) | LogAppendTime batch (records) |
    small batch (bytes): the target holds all four in source order."""
    a, b = two_clusters
    limit = {"max.message.bytes": "3000"}
    topic = a.create_topic("mixed", 1, limit)
    b.create_topic("A.mixed", 1, limit)  # the target topic's limit is what the task reads
    writer = a.producer(**{"linger.ms": 100, "batch.num.messages": 10_000})

    def group(prefix: bytes, count: int, size: int) -> None:
        for i in range(count):
            writer.produce(topic, value=prefix + b"-%d-" % i + b"x" * size, key=b"k%d" % i, partition=0)
        assert writer.flush(30) == 0

    group(b"small-1", 5, 20)
    group(b"big", 10, 900)  # ~9 KB in one batch: above 3000 bytes
    raw = BatchProducer(a.bootstrap_servers, {}, "test-log-append-time")
    try:
        done: list[BaseException | None] = []
        raw.send(topic, 0, _log_append_time_batch([b"lat-%d" % i for i in range(4)]), lambda _b, e: done.append(e))
        assert raw.flush(30) and done == [None]
    finally:
        raw.close()
    group(b"small-2", 5, 20)

    config = write_properties(tmp_path / "mm2.properties", mm2_properties({"A": a, "B": b}, ["A->B"], topics="mixed"))
    mm2 = Mm2Process(config, log_dir=tmp_path)
    try:
        eventually(
            lambda: mirrored_identically(a, topic, b, "A.mixed", at_least=24),
            STARTUP_S,
            "A.mixed on B",
            mm2,
            interval=1.0,
        )
        src = data_batches(a.bootstrap_servers, topic, 0)
        dst = data_batches(b.bootstrap_servers, "A.mixed", 0)
        copied = {s.records for s in src} & {d.records for d in dst}
        assert [s.records in copied for s in src] == [True, False, False, True]  # only the small ones as bytes
        assert all(d.crc_ok for d in dst)
        output = mm2.output()
        assert "larger than the target topic's max.message.bytes" in output
        assert "LogAppendTime timestamps" in output
        assert mm2.terminate() == 0
    finally:
        mm2.close()


def test_flows_with_a_transform_or_another_converter_use_the_record_path(
    three_clusters: tuple[KafkaCluster, KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    a, b, c = three_clusters
    topic = a.create_topic("plain", 2)
    _write_awkward(a, topic, "lz4", 2)
    config = write_properties(
        tmp_path / "mm2.properties",
        mm2_properties(
            {"A": a, "B": b, "C": c},
            ["A->B", "A->C"],
            topics="plain",
            **{
                # a filter whose predicate never matches: every record passes, but through the transform chain
                "A->B.transforms": "keep",
                "A->B.transforms.keep.type": "org.apache.kafka.connect.transforms.Filter",
                "A->B.transforms.keep.predicate": "never",
                "A->B.predicates": "never",
                "A->B.predicates.never.type": "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
                "A->B.predicates.never.name": "no-such-header",
                # a converter that passes bytes through, but is not the byte-array one
                "A->C.value.converter": "org.apache.kafka.connect.storage.StringConverter",
            },
        ),
    )
    mm2 = Mm2Process(config, log_dir=tmp_path)
    try:
        for target, alias in ((b, "B"), (c, "C")):
            eventually(
                lambda t=target: mirrored_identically(a, topic, t, "A.plain", at_least=36),
                STARTUP_S,
                f"A.plain on {alias}",
                mm2,
                interval=1.0,
            )
        paths = {f["flow"]: f["copy_path"] for f in status_json(config)["flows"]}
        assert paths["A->B"] == paths["A->C"] == "record"
        output = mm2.output()
        for flow in ("A->B", "A->C"):
            lines = re.findall(rf"{re.escape(flow)}\|MirrorSourceConnector-\d+ replicating .*", output)
            assert lines and all("(record path)" in line for line in lines), lines
        assert mm2.terminate() == 0
    finally:
        mm2.close()


def test_the_batch_path_over_tls_and_mutual_tls_with_java_stores(
    tls_clusters: Callable[..., TlsCluster], pki: Pki, tmp_path: Path
) -> None:
    """The batch path's own clients get the flow's security settings: A over TLS (JKS truststore), B over
    mutual TLS (PKCS12 stores), as the record path gets them."""
    a, b = tls_clusters("A"), tls_clusters("B", mutual=True)
    topic = a.create_topic("secured", 2)
    _write_awkward(a, topic, "lz4", 2)
    props = mm2_properties({"A": a, "B": b}, ["A->B"], topics="secured")
    props.update(java_tls("A", pki) | java_mutual_tls("B", pki))
    config = write_properties(tmp_path / "mm2.properties", props)
    mm2 = Mm2Process(config, log_dir=tmp_path)
    try:
        eventually(
            lambda: mirrored_identically(a, topic, b, "A.secured", at_least=36) or None,
            STARTUP_S,
            "A.secured on B over TLS",
            mm2,
            interval=1.0,
        )
        assert "(batch path)" in mm2.output()
        assert mm2.terminate() == 0
    finally:
        mm2.close()
    assert "Traceback" not in mm2.log_path.read_text(errors="replace")
