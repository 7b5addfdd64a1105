"""A continuous producer of numbered records, and the comparison that says what a mirror lost.

Every record carries ``<partition>:<seq>`` with a sequence number per partition that is never reused, so
a reader of any copy can tell lost, reordered and duplicated records apart. The producer is idempotent
and retries, so it rides through broker restarts; it remembers which records the broker acknowledged
(those must survive) and which failed (those may or may not have been written).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from confluent_kafka import KafkaError, KafkaException, Message, Producer, TopicPartition

from embedded_kafka import KafkaCluster


def encode(partition: int, seq: int) -> bytes:
    return f"{partition}:{seq}".encode()


def decode(value: bytes | None) -> tuple[int, int]:
    """(partition, seq) of a value written by :class:`SequencedProducer`."""
    assert value is not None
    partition, seq = value.decode().split(":")
    return int(partition), int(seq)


class SequencedProducer(threading.Thread):
    """Writes ``burst`` records to every partition every ``interval`` seconds until :meth:`finish`.

    A burst leaves as one batch per partition: few, larger batches keep the durable engine's per-batch
    fetch cost low.
    """

    def __init__(
        self, cluster: KafkaCluster, topic: str, partitions: int, *, burst: int = 10, interval: float = 0.5
    ) -> None:
        super().__init__(name=f"producer-{topic}", daemon=True)
        self._cluster, self._topic, self._partitions = cluster, topic, partitions
        self._burst, self._interval = burst, interval
        self._lock = threading.Lock()
        self._next = dict.fromkeys(range(partitions), 0)
        self.acked: dict[int, set[int]] = {p: set() for p in range(partitions)}
        self.failed: dict[int, set[int]] = {p: set() for p in range(partitions)}
        self.fatal_errors: list[str] = []
        self._stop_event = threading.Event()
        self._paused = threading.Event()
        self._fatal = threading.Event()
        self._error: BaseException | None = None

    def _new_producer(self) -> Producer:
        # Idempotent and patient: a restarting broker is retried for up to two minutes, reconnects are
        # tried at least every second; batches of a burst (linger) keep Tansu's per-batch fetch cost low.
        return Producer(
            self._cluster.client_config(
                **{
                    "enable.idempotence": True,
                    "acks": "all",
                    "linger.ms": 20,
                    "message.timeout.ms": 120_000,
                    "reconnect.backoff.max.ms": 1000,
                    "error_cb": self._on_error,
                }
            )
        )

    def _on_error(self, err: KafkaError) -> None:
        if err.fatal():
            self._note_fatal(str(err))

    def _note_fatal(self, what: str) -> None:
        with self._lock:
            if not self.fatal_errors or self.fatal_errors[-1] != what:
                self.fatal_errors.append(what)
        self._fatal.set()

    def next_seqs(self) -> dict[int, int]:
        """Per partition, the sequence number the next record will get."""
        with self._lock:
            return dict(self._next)

    def pause(self) -> None:
        """Stop writing new records (delivery reports are still served) until :meth:`resume`."""
        self._paused.set()

    def resume(self) -> None:
        self._paused.clear()

    def outstanding(self) -> int:
        """Records written but not yet reported delivered or failed."""
        with self._lock:
            produced = sum(self._next.values())
            return produced - sum(map(len, self.acked.values())) - sum(map(len, self.failed.values()))

    def acked_through(self) -> dict[int, int]:
        """Per partition, the highest acknowledged sequence number (-1 before the first)."""
        with self._lock:
            return {p: max(s, default=-1) for p, s in self.acked.items()}

    def _on_delivery(self, err: KafkaError | None, msg: Message) -> None:
        partition, seq = decode(msg.value())
        with self._lock:
            (self.failed if err is not None else self.acked)[partition].add(seq)

    def run(self) -> None:
        producer = self._new_producer()
        try:
            while not self._stop_event.is_set():
                if self._paused.is_set():
                    producer = self._poll(producer, 0.05)
                    continue
                for partition in range(self._partitions):
                    for _ in range(self._burst):
                        with self._lock:
                            seq = self._next[partition]
                            self._next[partition] = seq + 1
                        self._produce(producer, partition, seq)
                producer = self._poll(producer, self._interval)
            deadline = time.monotonic() + 150
            while len(producer) and time.monotonic() < deadline:  # the last deliveries, across fatal errors
                producer = self._poll(producer, 0.5)
        except BaseException as exc:  # reported by finish()
            self._error = exc
        finally:
            producer.purge()
            producer.poll(0)

    def _produce(self, producer: Producer, partition: int, seq: int) -> None:
        while True:
            try:
                producer.produce(
                    self._topic,
                    key=f"k{partition}".encode(),
                    value=encode(partition, seq),
                    partition=partition,
                    on_delivery=self._on_delivery,
                )
                return
            except BufferError:
                producer.poll(0.1)
            except KafkaException as exc:  # fatal: the next _poll replaces the producer
                with self._lock:
                    self.failed[partition].add(seq)
                self._note_fatal(str(exc))
                return

    def _poll(self, producer: Producer, seconds: float) -> Producer:
        """Serve delivery reports. After a fatal error (the broker lost the idempotent producer's state)
        the old producer's records are purged - they count as failed, written or not - and a new one
        takes over with the next sequence numbers."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                producer.poll(left)
            except KafkaException as exc:  # the fatal error, raised once more by poll
                self._note_fatal(str(exc))
            if self._fatal.is_set():
                self._drain_purged(producer)
                self._fatal.clear()
                return self._new_producer()
        return producer

    @staticmethod
    def _drain_purged(producer: Producer) -> None:
        """Purge a failed producer and serve every report it still owes (purged records report an error),
        so each record it held counts as failed; one poll can leave some unserved, and then they would
        stay outstanding for good."""
        producer.purge()
        deadline = time.monotonic() + 30
        while len(producer) and time.monotonic() < deadline:
            try:
                producer.poll(0.1)
            except KafkaException:  # the fatal error again
                pass

    def finish(self, timeout: float = 150.0) -> None:
        """Stop producing, wait for every outstanding delivery report, raise what the thread raised."""
        self._stop_event.set()
        self.join(timeout)
        assert not self.is_alive(), f"producer did not finish within {timeout}s"
        if self._error is not None:
            raise self._error


@dataclass
class MirrorReport:
    """What a copy holds compared with its source, per partition."""

    lost: dict[int, list[int]] = field(default_factory=dict)  # on the source, never on the copy
    out_of_order: dict[int, list[int]] = field(default_factory=dict)  # first copies not in source order
    duplicates: dict[int, int] = field(default_factory=dict)  # extra copies on the target
    source_duplicates: dict[int, int] = field(default_factory=dict)  # the producer's own (retries)
    records: dict[int, int] = field(default_factory=dict)  # distinct records per partition

    def summary(self) -> str:
        return (
            f"records {sum(self.records.values())} {self.records}; lost {sum(map(len, self.lost.values()))}; "
            f"out of order {sum(map(len, self.out_of_order.values()))}; duplicates on target "
            f"{sum(self.duplicates.values())} {self.duplicates}; duplicates already on source "
            f"{sum(self.source_duplicates.values())}"
        )


def _first_copies(seqs: Iterable[int]) -> list[int]:
    seen: set[int] = set()
    out = []
    for seq in seqs:
        if seq not in seen:
            seen.add(seq)
            out.append(seq)
    return out


def compare(source: Mapping[int, list[int]], target: Mapping[int, list[int]]) -> MirrorReport:
    """Compare per-partition sequence lists of a source and its copy (each in offset order).

    At-least-once copying replays ranges, so the copy may repeat records; taking each record's first
    copy must still give exactly the source's records in the source's order.
    """
    report = MirrorReport()
    for partition, src in source.items():
        dst = list(target.get(partition, []))
        src_first, dst_first = _first_copies(src), _first_copies(dst)
        report.records[partition] = len(src_first)
        report.source_duplicates[partition] = len(src) - len(src_first)
        report.duplicates[partition] = len(dst) - len(dst_first) - report.source_duplicates[partition]
        missing = set(src_first) - set(dst_first)
        if missing:
            report.lost[partition] = sorted(missing)
        present = set(dst_first)
        expected = [s for s in src_first if s in present]
        if [s for s in dst_first if s in set(src_first)] != expected:
            report.out_of_order[partition] = [a for a, b in zip(dst_first, expected, strict=False) if a != b][:20]
    return report


#: The durable engine's fetches cost more the more batches a partition holds, and Tansu stops listing
#: them when the fetch wait runs out: the test reader's 100 ms would crawl through a few hundred batches.
_READER = {"fetch.wait.max.ms": 1000}


def sequences(cluster: KafkaCluster, topic: str, timeout: float = 60.0) -> dict[int, list[int]]:
    """Per partition, the sequence numbers of ``topic`` in offset order (checked against the partition)."""
    out: dict[int, list[int]] = {}
    for partition, msgs in cluster.read_all(topic, timeout, consumer_overrides=_READER).items():
        seqs = []
        for m in msgs:
            written_to, seq = decode(m.value())
            assert written_to == partition, f"record {written_to}:{seq} found in partition {partition}"
            seqs.append(seq)
        out[partition] = seqs
    return out


class TailReader:
    """One consumer following a topic that is still being written (reading to the fetch EOF would chase
    the tail forever): per partition, the sequence numbers read so far, in offset order."""

    def __init__(self, cluster: KafkaCluster, topic: str, partitions: int) -> None:
        self._consumer = cluster.consumer(**_READER)
        self._consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        self.seqs: dict[int, list[int]] = {p: [] for p in range(partitions)}

    def drain(self, max_seconds: float = 5.0) -> dict[int, list[int]]:
        """Read what is there now (until a poll brings nothing or ``max_seconds`` passed)."""
        deadline = time.monotonic() + max_seconds
        while time.monotonic() < deadline:
            batch = [m for m in self._consumer.consume(num_messages=1000, timeout=0.5) if m.error() is None]
            for m in batch:
                partition, seq = decode(m.value())
                self.seqs[partition].append(seq)
            if not batch:
                break
        return self.seqs

    def reached(self, marks: Mapping[int, int]) -> bool:
        """True when every partition holds a record at or beyond its mark's sequence number."""
        seqs = self.drain()
        return all(max(seqs[p], default=-1) >= mark for p, mark in marks.items())

    def close(self) -> None:
        self._consumer.close()
