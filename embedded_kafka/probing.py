"""What a test broker can do, probed once per cluster, so tests skip with a reason instead of failing.

The names are fixed (:data:`CAPABILITIES`); each is probed lazily the first time it is asked about and
cached on the cluster. Probes create throwaway ``mm2-probe-*`` topics and delete them afterwards.

Safety rules from ``broker-notes.md``:

* CreateAcls is never called in this process: on Tansu librdkafka aborts the whole process when it
  parses the malformed response. It runs in a child Python process and only on brokers that look like
  Apache Kafka.
* DeleteRecords is never called on Tansu (its broker task panics and drops the connection).
* A broker that does not advertise CreatePartitions is not Apache Kafka >= 1.0; it is treated as Tansu
  ("Tansu-like") and its known gaps are reported from the notes instead of probed.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from connect_core.kafka.types import ClientPartition, KafkaError, KafkaException, NewPartitions
from embedded_kafka.cluster import KafkaCluster
from embedded_kafka.engine import Engine

TRANSACTIONAL_ISOLATION = "transactional_isolation"
CREATE_PARTITIONS = "create_partitions"
CREATE_ACLS = "create_acls"
DELETE_RECORDS = "delete_records"
OFFSET_OUT_OF_RANGE_RESET = "offset_out_of_range_reset"
LOG_CLEANING = "log_cleaning"

CAPABILITIES: tuple[str, ...] = (
    TRANSACTIONAL_ISOLATION,
    CREATE_PARTITIONS,
    CREATE_ACLS,
    DELETE_RECORDS,
    OFFSET_OUT_OF_RANGE_RESET,
    LOG_CLEANING,
)

_NOTES = "broker-notes.md"

#: Known Tansu gaps (reason texts cite the notes). Used for Tansu clusters and Tansu-like brokers.
TANSU_GAPS: dict[str, str] = {
    TRANSACTIONAL_ISOLATION: (
        f"Tansu shows aborted transactional records to read_committed consumers ({_NOTES}: "
        "'transaction abort + read_committed'); exactly-once isolation needs Apache Kafka"
    ),
    CREATE_PARTITIONS: f"Tansu does not support CreatePartitions ({_NOTES}: 'CreatePartitions')",
    CREATE_ACLS: (
        f"Tansu's CreateAcls response is malformed and makes librdkafka abort the process ({_NOTES}: "
        "'CreateAcls / DeleteAcls'); not called"
    ),
    DELETE_RECORDS: (
        f"Tansu does not implement DeleteRecords (the broker task panics and drops the connection; "
        f"{_NOTES}: 'DeleteRecords'); not called"
    ),
    OFFSET_OUT_OF_RANGE_RESET: (
        f"Tansu returns nothing for a fetch past the end instead of OFFSET_OUT_OF_RANGE, so "
        f"auto.offset.reset never fires ({_NOTES}: 'offset out of range')"
    ),
    LOG_CLEANING: f"Tansu never runs compaction or time retention ({_NOTES}: 'compaction, time retention')",
}


@dataclass
class _Result:
    supported: bool
    reason: str


@dataclass
class BrokerCapabilities:
    """Lazily probed capabilities of one cluster; ask with :meth:`supports` / :meth:`reason`."""

    cluster: KafkaCluster
    _results: dict[str, _Result] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def supports(self, name: str) -> bool:
        """True when the broker does ``name`` as Apache Kafka does (probing it on first use)."""
        return self._get(name).supported

    def reason(self, name: str) -> str:
        """Why ``name`` is (un)supported: the probe's finding or the cited broker note."""
        return self._get(name).reason

    def summary(self) -> dict[str, tuple[bool, str]]:
        """Every capability probed: name -> (supported, reason)."""
        return {name: (self.supports(name), self.reason(name)) for name in CAPABILITIES}

    def _get(self, name: str) -> _Result:
        if name not in CAPABILITIES:
            raise ValueError(f"unknown broker capability {name!r}; known: {', '.join(CAPABILITIES)}")
        with self._lock:
            result = self._results.get(name)
            if result is None:
                result = self._probe(name)
                self._results[name] = result
            return result

    # ------------------------------------------------------------------ probing

    def _tansu_like(self) -> bool:
        """Tansu by engine, or a broker that does not advertise CreatePartitions (so not real Kafka)."""
        if self.cluster.engine is Engine.TANSU:
            return True
        cp = self._results.get(CREATE_PARTITIONS) or self._probe(CREATE_PARTITIONS)
        self._results[CREATE_PARTITIONS] = cp
        return not cp.supported and "_UNSUPPORTED_FEATURE" in cp.reason

    def _probe(self, name: str) -> _Result:
        if name == CREATE_PARTITIONS:
            return _probe_create_partitions(self.cluster)
        if name == TRANSACTIONAL_ISOLATION:
            return _probe_transactional_isolation(self.cluster)
        if self._tansu_like():
            return _Result(False, TANSU_GAPS[name])
        probe: dict[str, Callable[[KafkaCluster], _Result]] = {
            CREATE_ACLS: _probe_create_acls,
            DELETE_RECORDS: _probe_delete_records,
            OFFSET_OUT_OF_RANGE_RESET: _probe_offset_out_of_range_reset,
            LOG_CLEANING: lambda _c: _Result(
                True,
                "assumed on Apache Kafka (the log cleaner runs there); not probed because compaction "
                "takes minutes to show",
            ),
        }
        return probe[name](self.cluster)


def capabilities(cluster: KafkaCluster) -> BrokerCapabilities:
    """The cached :class:`BrokerCapabilities` of ``cluster`` (created on first call)."""
    caps = cluster._capabilities
    if not isinstance(caps, BrokerCapabilities) or caps.cluster is not cluster:
        caps = BrokerCapabilities(cluster)
        cluster._capabilities = caps
    return caps


# ---------------------------------------------------------------------- individual probes


def _probe_topic(cluster: KafkaCluster, what: str, partitions: int = 1) -> str:
    return cluster.create_topic(f"mm2-probe-{what}-{uuid.uuid4().hex[:8]}", partitions)


def _drop(cluster: KafkaCluster, topic: str) -> None:
    admin = cluster.admin()  # keep a reference: a dropped AdminClient fails its pending futures
    try:
        admin.delete_topics([topic], operation_timeout=10)[topic].result(timeout=10)
    except Exception:  # best-effort cleanup of a probe topic
        pass


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        err: KafkaError = exc.args[0]
        return f"{err.name()}: {err.str()}"
    return f"{type(exc).__name__}: {exc}"


def _probe_create_partitions(cluster: KafkaCluster) -> _Result:
    topic = _probe_topic(cluster, "cp")
    try:
        admin = cluster.admin()
        try:
            admin.create_partitions([NewPartitions(topic, 2)])[topic].result(timeout=15)
        except KafkaException as exc:
            return _Result(False, f"CreatePartitions failed: {_error_text(exc)}")
        try:
            cluster_parts = lambda: len(cluster.partitions_for(topic)) == 2  # noqa: E731
            deadline = time.monotonic() + 10
            while not cluster_parts():
                if time.monotonic() > deadline:
                    return _Result(False, "CreatePartitions accepted but the partition count did not grow")
                time.sleep(0.1)
        except KeyError:
            return _Result(False, "probe topic vanished after CreatePartitions")
        return _Result(True, "CreatePartitions grew a probe topic from 1 to 2 partitions")
    finally:
        _drop(cluster, topic)


def _probe_transactional_isolation(cluster: KafkaCluster) -> _Result:
    """Abort one transactional record, commit another; read_committed must see only the committed one."""
    topic = _probe_topic(cluster, "txn")
    try:
        producer = cluster.producer(
            **{
                "transactional.id": f"mm2-probe-{uuid.uuid4().hex[:8]}",
                "enable.idempotence": True,
                "max.in.flight.requests.per.connection": 5,
            }
        )
        try:
            producer.init_transactions(15)
            producer.begin_transaction()
            producer.produce(topic, value=b"aborted", partition=0)
            producer.flush(15)
            producer.abort_transaction(15)
            producer.begin_transaction()
            producer.produce(topic, value=b"committed", partition=0)
            producer.commit_transaction(15)
        except KafkaException as exc:
            return _Result(False, f"transactions failed: {_error_text(exc)}")
        finally:
            producer.close()
        values = [m.value() for m in cluster.read_all(topic, isolation="read_committed")[0]]
        if values == [b"committed"]:
            return _Result(True, "read_committed hides an aborted transactional record")
        return _Result(
            False,
            f"read_committed returned {values!r} after one aborted and one committed transaction "
            f"(aborted records are not hidden; {_NOTES}: 'transaction abort + read_committed')",
        )
    finally:
        _drop(cluster, topic)


def _probe_delete_records(cluster: KafkaCluster) -> _Result:
    topic = _probe_topic(cluster, "dr")
    try:
        cluster.produce(topic, [b"a", b"b", b"c"])
        admin = cluster.admin()
        try:
            futures = admin.delete_records([ClientPartition(topic, 0, 2)], request_timeout=15)
            result = futures[ClientPartition(topic, 0)].result(timeout=15)
        except (KafkaException, TypeError) as exc:
            return _Result(False, f"DeleteRecords failed: {_error_text(exc)}")
        low = getattr(result, "low_watermark", None)
        if low == 2:
            return _Result(True, "DeleteRecords moved the low watermark to 2")
        return _Result(False, f"DeleteRecords answered low watermark {low!r}, expected 2")
    finally:
        _drop(cluster, topic)


def _probe_offset_out_of_range_reset(cluster: KafkaCluster) -> _Result:
    """Assign past the end with auto.offset.reset=earliest: Kafka resets and delivers offset 0."""
    topic = _probe_topic(cluster, "oor")
    try:
        cluster.produce(topic, [b"x"])
        consumer = cluster.consumer(**{"enable.partition.eof": False, "auto.offset.reset": "earliest"})
        try:
            consumer.assign([ClientPartition(topic, 0, 1000)])
            deadline = time.monotonic() + 8
            while time.monotonic() < deadline:
                msg = consumer.poll(0.2)
                if msg is not None and msg.error() is None:
                    if msg.offset() == 0:
                        return _Result(True, "fetch past the end reset to the earliest offset")
                    return _Result(False, f"fetch past the end delivered offset {msg.offset()}")
            return _Result(False, "fetch past the end returned nothing within 8s (no OFFSET_OUT_OF_RANGE)")
        finally:
            consumer.close()
    finally:
        _drop(cluster, topic)


_ACL_CHILD = textwrap.dedent(
    """
    import sys
    from connect_core.kafka.types import (AdminClient, AclBinding, AclOperation, AclPermissionType,
                                       ResourcePatternType, ResourceType)
    admin = AdminClient({"bootstrap.servers": sys.argv[1], "allow.auto.create.topics": False})
    acl = AclBinding(ResourceType.TOPIC, sys.argv[2], ResourcePatternType.LITERAL, "User:mm2-probe", "*",
                     AclOperation.READ, AclPermissionType.ALLOW)
    try:
        admin.create_acls([acl], request_timeout=15)[acl].result(timeout=20)
    except Exception as exc:
        print("FAILED", exc)
        sys.exit(3)
    print("OK")
    """
)


def _probe_create_acls(cluster: KafkaCluster) -> _Result:
    """CreateAcls in a child process, so a client abort (as on Tansu) cannot take this process down."""
    resource = f"mm2-probe-acl-{uuid.uuid4().hex[:8]}"
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _ACL_CHILD, cluster.bootstrap_servers, resource],
            capture_output=True,
            text=True,
            timeout=40,
        )
    except subprocess.TimeoutExpired:
        return _Result(False, "CreateAcls probe did not finish within 40s")
    out = (proc.stdout + proc.stderr).strip()[-400:]
    if proc.returncode == 0:
        _delete_probe_acl(cluster, resource)
        return _Result(True, "CreateAcls succeeded (probe ACL deleted again)")
    if proc.returncode < 0:
        return _Result(False, f"CreateAcls killed the client process (signal {-proc.returncode}): {out}")
    return _Result(False, f"CreateAcls failed: {out}")


def _delete_probe_acl(cluster: KafkaCluster, resource: str) -> None:
    from connect_core.kafka.types import (
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        ResourcePatternType,
        ResourceType,
    )

    flt = AclBindingFilter(
        ResourceType.TOPIC,
        resource,
        ResourcePatternType.LITERAL,
        "User:mm2-probe",
        "*",
        AclOperation.ANY,
        AclPermissionType.ANY,
    )
    admin = cluster.admin()
    try:
        admin.delete_acls([flt], request_timeout=15)[flt].result(timeout=20)
    except Exception:  # best-effort cleanup
        pass


def capability_skip_reason(clusters: Iterable[KafkaCluster], names: Iterable[str]) -> str | None:
    """Why a test needing ``names`` on every one of ``clusters`` cannot run here; None when it can.

    Test frameworks turn a non-None answer into a skip (see ``tests/conftest.py``).
    """
    missing = [
        f"cluster {cluster.name!r} lacks {name}: {capabilities(cluster).reason(name)}"
        for cluster in clusters
        for name in names
        if not capabilities(cluster).supports(name)
    ]
    return "; ".join(missing) if missing else None
