"""KafkaBasedLog: a shared, compacted topic every worker reads completely and then tails.

Java Connect keeps its config, offset and status stores in such logs. One background thread owns
the consumer (assigned to every partition, from the beginning) and calls ``consume`` for each
record in log order, so a store that only mutates its state from that callback needs no locks
against itself. The callback must never wait on ``read_to_end()`` (it runs on the thread that
completes it).

``read_to_end()`` is a barrier: it completes once every record acknowledged before the call has
been passed to ``consume``. As Java's, it learns where each partition ends now and waits until the
tail's positions reach those offsets, so a log already read to its end costs one round trip and the
tail can long-poll at the consumer's default wait. The ends come from a short Fetch answer's high
watermark (last stable offset under read_committed), not ListOffsets, which some Kafka-protocol brokers
(Tansu) answer wrongly (:mod:`connect_core.kafka.log_ends`). Where that Fetch cannot be made, the tail
seeks every partition to its current position - which discards whatever was fetched earlier and
forces a fresh fetch - and waits for a PARTITION_EOF event per partition: librdkafka emits it when a
fetch response shows the position has reached the end, and after the seek only responses to requests
sent after the barrier began can produce it. Both are exact on Apache Kafka too.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, KafkaError, Message, TopicPartition

from connect_core.api.errors import ConfigError, ConnectError
from connect_core.kafka.admin import NewTopicSpec, TopicAdmin
from connect_core.kafka.clients import consumer_config, create_consumer, create_producer, producer_config
from connect_core.kafka.errors import from_kafka_error
from connect_core.kafka.log_ends import LogEnds, still_to_read

log = logging.getLogger(__name__)

ConsumeCallback = Callable[[Message], None]
SendCallback = Callable[[BaseException | None, Message | None], None]

_POLL_S = 0.1
_BATCH = 500
#: The tail's wait for new records (the Java consumer's default): an idle log costs its broker a fetch of
#: every partition per wait, and read_to_end does not wait on it (it asks where the log ends instead).
_TAIL_WAIT_MS = 500
#: Bounds the end-offsets fetch (it runs on the tail thread, which reads nothing meanwhile).
_ENDS_TIMEOUT_S = 10.0


class KafkaBasedLog:
    """Producer + tailing consumer over one topic.

    ``producer_props``/``consumer_props`` are Java-style client properties (bootstrap.servers,
    security...); acks=all, one in-flight request, no auto-commit and reading from the beginning
    are forced as in Java. ``topic_spec`` (optional) creates the topic if missing;
    ``require_single_partition`` refuses a multi-partition topic (the config topic must keep
    total order). ``read_only`` builds no producer.
    """

    def __init__(
        self,
        topic: str,
        producer_props: Mapping[str, Any],
        consumer_props: Mapping[str, Any],
        consume: ConsumeCallback,
        *,
        admin: TopicAdmin | None = None,
        topic_spec: NewTopicSpec | None = None,
        require_single_partition: str | None = None,
        read_only: bool = False,
        start_timeout_s: float = 60.0,
    ) -> None:
        self.topic = topic
        self._consume = consume
        self._admin = admin
        self._topic_spec = topic_spec
        self._single_partition_key = require_single_partition
        self._read_only = read_only
        self._start_timeout_s = start_timeout_s
        self._producer_conf = producer_config(
            producer_props,
            {"acks": "all", "max.in.flight.requests.per.connection": 1, "enable.idempotence": False},
        )
        self._consumer_conf = consumer_config(
            consumer_props,
            {
                "group.id": consumer_props.get("group.id") or f"kafka-based-log-{topic}",
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "auto.offset.reset": "earliest",
                "enable.partition.eof": True,
            },
        )
        # >= 100 keeps Tansu fetching on logs of many batches; the barrier pays about 2x it only where
        # the ends cannot be fetched (then it waits for fresh end-of-partition events)
        self._consumer_conf.setdefault("fetch.wait.max.ms", _TAIL_WAIT_MS)
        self._ends: LogEnds | None = LogEnds(
            topic,
            consumer_props,
            read_committed=self._consumer_conf.get("isolation.level", "read_committed") != "read_uncommitted",
            timeout_s=min(start_timeout_s, _ENDS_TIMEOUT_S),
        )
        self._producer: Any = None
        self._consumer: Any = None
        self._partitions: list[int] = []
        self._positions: dict[int, int] = {}
        self._lock = threading.Lock()
        self._pending: list[Future[None]] = []
        self._stop = threading.Event()
        self._tail_thread: threading.Thread | None = None
        self._producer_thread: threading.Thread | None = None
        self._failure: BaseException | None = None

    # ------------------------------------------------------------------------------- lifecycle

    @property
    def partition_count(self) -> int:
        return len(self._partitions)

    def start(self) -> None:
        """Create the topic if asked, read it to the end, then keep tailing it in the background."""
        owns_admin = self._admin is None
        admin = self._admin or TopicAdmin(self._admin_props())
        try:
            if self._topic_spec is not None:
                admin.create_topics_if_missing([self._topic_spec])
            info = admin.wait_for_topic(self.topic, self._start_timeout_s)
        finally:
            if owns_admin:
                admin.close()
        self._partitions = [p.id for p in info.partitions]
        if self._single_partition_key and len(self._partitions) > 1:
            raise ConfigError(
                f"Topic '{self.topic}' supplied via the '{self._single_partition_key}' property is required to have "
                "a single partition in order to guarantee consistency of connector configurations, but found "
                f"{len(self._partitions)} partitions.",
                key=self._single_partition_key,
            )
        if not self._read_only:
            self._producer = create_producer(self._producer_conf)
        self._consumer = create_consumer(self._consumer_conf)
        self._consumer.assign([TopicPartition(self.topic, p, OFFSET_BEGINNING) for p in self._partitions])
        self._positions = dict.fromkeys(self._partitions, OFFSET_BEGINNING)
        self._stop.clear()
        self._tail_thread = threading.Thread(target=self._tail, name=f"KafkaBasedLog-{self.topic}", daemon=True)
        self._tail_thread.start()
        if self._producer is not None:
            self._producer_thread = threading.Thread(
                target=self._serve_producer, name=f"KafkaBasedLog-{self.topic}-producer", daemon=True
            )
            self._producer_thread.start()
        try:
            self._await_progressing(self.read_to_end())
        except TimeoutError:
            self.stop()
            raise ConnectError(
                f"Timed out reading topic '{self.topic}' to its end: no progress for {self._start_timeout_s}s"
            ) from None
        except BaseException:
            self.stop()
            raise
        log.info("Started KafkaBasedLog for topic %s (%d partitions)", self.topic, len(self._partitions))

    def _await_progressing(self, future: Future[None]) -> None:
        """Wait for ``future`` while the log is being read: ``start_timeout_s`` bounds a wait without progress,
        not the whole read, so a big topic is read to its end however long that takes."""
        seen = 0
        while True:
            try:
                future.result(timeout=self._start_timeout_s)
                return
            except TimeoutError:
                progress = sum(o for o in self._positions.values() if o >= 0)
                if progress <= seen:
                    raise
                seen = progress

    def stop(self) -> None:
        """Flush pending writes, stop tailing, close both clients. Safe to call twice."""
        if self._producer is not None:
            try:
                remaining = self._producer.flush(30)
                if remaining:
                    log.warning("%d writes to %s were not acknowledged before stop", remaining, self.topic)
            except Exception as e:
                log.warning("Flushing the producer of %s failed: %s", self.topic, e)
        self._stop.set()
        for t in (self._tail_thread, self._producer_thread):
            if t is not None and t is not threading.current_thread():
                t.join(timeout=30)
        self._tail_thread = self._producer_thread = None
        if self._ends is not None:
            self._ends.close()
        if self._consumer is not None:
            try:
                self._consumer.close()
            except Exception as e:
                log.debug("Closing the consumer of %s: %s", self.topic, e)
            self._consumer = None
        self._producer = None
        with self._lock:
            pending, self._pending = self._pending, []
        for f in pending:
            if not f.done():
                f.set_exception(ConnectError(f"KafkaBasedLog for {self.topic} stopped"))
        log.info("Stopped KafkaBasedLog for topic %s", self.topic)

    def _admin_props(self) -> dict[str, Any]:
        keys = ("bootstrap.servers", "security.protocol", "client.dns.lookup")
        props = {k: v for k, v in self._consumer_conf.items() if k in keys or k.startswith(("ssl.", "sasl."))}
        return props

    # ------------------------------------------------------------------------------- reading

    def read_to_end(self) -> Future[None]:
        """Flush our writes, then complete once everything written before now has been consumed."""
        self.flush()
        future: Future[None] = Future()
        with self._lock:
            if self._failure is not None:
                future.set_exception(self._failure)
                return future
            if self._tail_thread is None:
                future.set_exception(ConnectError(f"KafkaBasedLog for {self.topic} is not running"))
                return future
            self._pending.append(future)
        return future

    def _tail(self) -> None:
        consumer = self._consumer
        active: list[Future[None]] = []
        awaiting: set[int] = set()  # waiting for these partitions' end-of-partition events (no known ends)
        ends: dict[int, int] = {}  # else: waiting for the positions to reach these end offsets
        try:
            while not self._stop.is_set():
                if not active:
                    with self._lock:
                        active, self._pending = self._pending, []
                    if active:
                        known = self._end_offsets()
                        if known is not None:
                            ends = still_to_read(self._positions, known)
                        else:
                            # Restart fetching at the current positions so only fresh fetch responses count.
                            for p in self._partitions:
                                consumer.seek(TopicPartition(self.topic, p, self._positions[p]))
                            awaiting = set(self._partitions)
                for msg in consumer.consume(_BATCH, _POLL_S):
                    err = msg.error()
                    if err is None:
                        self._positions[msg.partition()] = msg.offset() + 1
                        try:
                            self._consume(msg)
                        except Exception:
                            log.exception("Consume callback of KafkaBasedLog %s failed", self.topic)
                    elif err.code() == KafkaError._PARTITION_EOF:
                        self._positions[msg.partition()] = msg.offset()
                        awaiting.discard(msg.partition())
                    elif err.fatal():
                        raise from_kafka_error(err, f"Consumer of {self.topic} failed")
                    else:
                        log.warning("Error reading %s: %s", self.topic, err.str())
                if ends:
                    ends = {p: end for p, end in ends.items() if self._positions[p] < end}
                if active and not awaiting and not ends:
                    for f in active:
                        if not f.done():
                            f.set_result(None)
                    active = []
        except BaseException as e:  # the thread dies: fail every waiter, now and later
            log.exception("KafkaBasedLog tail thread for %s failed", self.topic)
            with self._lock:
                self._failure = e
                pending, self._pending = self._pending, []
            for f in active + pending:
                if not f.done():
                    f.set_exception(e)

    def _end_offsets(self) -> dict[int, tuple[int, int]] | None:
        """Partition -> (end offset, log start) now; None when they cannot be fetched: this barrier then
        waits for end-of-partition events (and every later one too where the client settings are the cause)."""
        if self._ends is None:
            return None
        try:
            return self._ends.now(self._positions)
        except ConfigError as e:  # a security setting the raw client does not take
            log.info("Reading %s to its end by end-of-partition events: %s", self.topic, e)
            self._ends.close()
            self._ends = None
        except Exception as e:  # a broker restarting or unreachable: the next barrier asks again
            log.debug("End offsets of %s not fetched: %s", self.topic, e)
            self._ends.close()
        return None

    # ------------------------------------------------------------------------------- writing

    def send(self, key: bytes | None, value: bytes | None, callback: SendCallback | None = None) -> None:
        """Write one record; ``callback(error, message)`` runs once the broker acknowledged (or failed) it."""
        if self._producer is None:
            raise ConnectError(f"KafkaBasedLog for {self.topic} is read-only or not started")

        def on_delivery(err: KafkaError | None, msg: Message) -> None:
            if callback is not None:
                callback(None if err is None else from_kafka_error(err, f"Write to {self.topic} failed"), msg)

        while True:
            try:
                self._producer.produce(self.topic, value=value, key=key, on_delivery=on_delivery)
                return
            except BufferError:
                self._producer.poll(0.1)  # the local queue is full: wait for deliveries

    def send_future(self, key: bytes | None, value: bytes | None) -> Future[None]:
        """``send`` returning a future that completes on acknowledgement."""
        future: Future[None] = Future()

        def done(err: BaseException | None, _msg: Message | None) -> None:
            if err is None:
                future.set_result(None)
            else:
                future.set_exception(err)

        self.send(key, value, done)
        return future

    def flush(self, timeout_s: float = 30.0) -> None:
        """Wait until every write so far is acknowledged (or failed; failures go to their callbacks)."""
        if self._producer is not None:
            remaining = self._producer.flush(timeout_s)
            if remaining:
                raise ConnectError(f"{remaining} writes to {self.topic} still unacknowledged after {timeout_s}s")

    def _serve_producer(self) -> None:
        """Delivery callbacks run only inside poll(); serve them promptly from one thread."""
        producer = self._producer
        while not self._stop.is_set():
            producer.poll(0.2)
        producer.poll(0)

    def wait_until(self, predicate: Callable[[], bool], timeout_s: float) -> None:
        """Re-read to the end until ``predicate()`` holds (for tests and stores waiting on a write)."""
        deadline = time.monotonic() + timeout_s
        while True:
            self.read_to_end().result(timeout=max(0.1, deadline - time.monotonic()))
            if predicate():
                return
            if time.monotonic() >= deadline:
                raise TimeoutError(f"condition on {self.topic} not met within {timeout_s}s")
