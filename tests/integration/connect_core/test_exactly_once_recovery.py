"""An exactly-once source task whose transactional producer fails without being fenced recovers: the
instance is replaced by a fresh one (same transactional.id, a new epoch) that resumes from the last
committed offsets; the task never reports FAILED, and a read_committed reader of the output holds every
record once, in order. A task that keeps failing is bounded: past its recovery budget it fails, saying so.

Triggers: a broker that lost the producer's state answers OUT_OF_ORDER_SEQUENCE_NUMBER (fatal); no broker
here does that on demand (a durable Tansu broker restarted under a task did not, in 5 kills), so the
task's real producer is wrapped to report that error at one commit, after which the real transaction is
aborted by the task as it would be. Everything else is real: the abort markers, the new producer's
init_transactions, the offsets re-read (read_committed, from the markers) and the copy. And a real
stall: the target broker frozen (SIGSTOP) past a shortened delivery timeout fails the task as before,
since a time-out is also what a thawed zombie meets (restarting it would fence the live instance).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from connect_core.api.errors import ConnectError
from connect_core.kafka.admin import NewTopicSpec
from connect_core.kafka.clients import create_producer, producer_config
from connect_core.model import ConnectorTaskId, State
from connect_core.runtime import worker as worker_module
from connect_core.runtime.exactly_once_source_task import ExactlyOnceWorkerSourceTask
from connect_core.runtime.worker import Worker
from connect_core.storage.kafka_offsets import KafkaOffsetBackingStore
from embedded_kafka import KafkaCluster
from tests.integration.connect_core.test_exactly_once_source_task import Env, wait_for
from tests.oracle.committed_reader import read_topic_committed
from tests.worker_plugins import CONNECTOR, Registry

RECOVERY_S = 120.0
#: The task's producer gives up on a record after this long (the product's default is 60 s).
DELIVERY_TIMEOUT_MS = "2000"


class Faults:
    """Which commits (counted over every producer the worker builds) report a fatal, not fenced, error."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.commits = 0
        self.failing: set[int] = set()

    def next_commit_fails(self) -> bool:
        with self.lock:
            self.commits += 1
            return self.commits in self.failing


class LostStateProducer:
    """The worker's real producer; at the commits ``faults`` names it answers as a broker that lost the
    producer's state does (OUT_OF_ORDER_SEQUENCE_NUMBER, fatal), without committing."""

    def __init__(self, real: Any, faults: Faults) -> None:
        self._real = real
        self._faults = faults

    def commit_transaction(self, *args: Any) -> None:
        if self._faults.next_commit_fails():
            raise KafkaException(
                KafkaError(KafkaError.OUT_OF_ORDER_SEQUENCE_NUMBER, "Broker: Out of order sequence number", fatal=True)
            )
        self._real.commit_transaction(*args)

    def __len__(self) -> int:
        return len(self._real)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


@pytest.fixture
def faults() -> Faults:
    return Faults()


@pytest.fixture
def eos(kafka_cluster: KafkaCluster, unique_name: Callable[[str], str], faults: Faults) -> Iterator[Env]:
    """A distributed worker with exactly-once source support enabled, on the test's broker, its offset
    store read_committed as the product builds it for such a worker, its producers wrapped by ``faults``."""
    e = Env(kafka_cluster, unique_name)
    e.worker.offset_store.stop()
    client = {"bootstrap.servers": kafka_cluster.bootstrap_servers}
    e.offsets = KafkaOffsetBackingStore(NewTopicSpec(e.offsets_topic, 5, 1), client, exactly_once=True)

    def factory(props: Mapping[str, Any]) -> Any:
        return LostStateProducer(create_producer(producer_config(dict(props))), faults)

    e.worker = Worker("w", e.worker.config, e.offsets, status_store=e.status, producer_factory=factory)
    e.worker.start()
    yield e
    e.worker.stop()


def _instance(env: Env, tid: ConnectorTaskId) -> ExactlyOnceWorkerSourceTask:
    task = env.worker.task(tid)
    assert isinstance(task, ExactlyOnceWorkerSourceTask)
    return task


def _replaced(env: Env, tid: ConnectorTaskId, old: ExactlyOnceWorkerSourceTask) -> bool:
    task = env.worker.task(tid)
    return task is not None and task is not old and task.is_running


def _committed(name: str) -> int:
    """Records whose transaction committed, as the task heard of them (``commit_record``): progress
    without reading the offsets topic, which a committing task keeps growing."""
    return len(Registry.committed_records[name])


def _last_committed_offset(env: Env, name: str) -> int:
    """The connector's committed offset once nothing writes any more (a read may time out on a slow machine)."""
    found: list[int | None] = []

    def read() -> bool:
        try:
            found.append(env.committed_offset(name))
        except ConnectError:
            return False
        return True

    wait_for(read, RECOVERY_S, "the committed offset")
    assert found[-1] is not None
    return found[-1]


def _state(env: Env, tid: ConnectorTaskId) -> State | None:
    status = env.status.get_task(tid)
    return None if status is None else status.state


def _run(env: Env, name: str, topic: str, **extra: str) -> ConnectorTaskId:
    conn = {"name": name, "connector.class": CONNECTOR, "topic": topic, "records": "1000000", "batch": "5",
            "poll.delay": "0.05", **extra}  # fmt: skip
    return env.run_task(name, conn, {"poll.delay": "0.05"})


def test_a_fatal_producer_error_is_recovered_from_and_nothing_is_lost_or_duplicated(
    kafka_cluster: KafkaCluster, eos: Env, faults: Faults, unique_name: Callable[[str], str]
) -> None:
    faults.failing = {6}
    topic = kafka_cluster.create_topic(unique_name("eos-recover"), partitions=1)
    tid = _run(eos, "recover", topic)
    first = _instance(eos, tid)
    wait_for(lambda: Registry.started["recover"] == 2, RECOVERY_S, "the connector's task started again")
    assert _instance(eos, tid) is not first and not first.is_failed
    assert "Out of order sequence number" in str(first.restart_cause)
    resumed = _committed("recover")
    wait_for(lambda: _committed("recover") > resumed + 30, RECOVERY_S, "commits after the restart")
    assert _state(eos, tid) is State.RUNNING
    eos.worker.stop_and_await_task(tid)
    last = _last_committed_offset(eos, "recover")
    log = read_topic_committed(kafka_cluster, topic, timeout_s=RECOVERY_S)[0]
    assert log.open == 0  # the failed transaction was aborted (its records purged before they left, or marked)
    assert [r.value for r in log.committed] == [f"v0-{n}".encode() for n in range(last + 1)]


def test_a_task_that_keeps_failing_fails_once_its_budget_is_spent(
    kafka_cluster: KafkaCluster,
    eos: Env,
    faults: Faults,
    unique_name: Callable[[str], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(worker_module, "MAX_RECOVERIES", 1)
    faults.failing = {4, 8}
    topic = kafka_cluster.create_topic(unique_name("eos-budget"), partitions=1)
    tid = _run(eos, "budget", topic)
    wait_for(lambda: _state(eos, tid) is State.FAILED, RECOVERY_S, "the task FAILED")
    status = eos.status.get_task(tid)
    assert status is not None
    assert "failed more often than the 1 recoveries within 600 s it recovers from" in (status.trace or "")
    assert "Out of order sequence number" in (status.trace or "") and "fenced" not in (status.trace or "")
    assert Registry.started["budget"] == 2
    task = eos.worker.task(tid)
    assert task is not None and task.is_failed  # nothing restarts a failed task


def test_a_target_stalled_past_the_delivery_timeout_fails_the_task_as_before(
    kafka_cluster: KafkaCluster, eos: Env, unique_name: Callable[[str], str]
) -> None:
    topic = kafka_cluster.create_topic(unique_name("eos-stall"), partitions=1)
    tid = _run(eos, "stall", topic, **{"producer.override.delivery.timeout.ms": DELIVERY_TIMEOUT_MS})
    wait_for(lambda: _committed("stall") > 10, RECOVERY_S, "the task committing")
    task = _instance(eos, tid)
    try:
        kafka_cluster.pause()  # type: ignore[attr-defined]
    except NotImplementedError as e:
        pytest.skip(str(e))
    try:
        wait_for(lambda: not task.is_running, RECOVERY_S, "the stalled instance to give up")
    finally:
        kafka_cluster.resume()  # type: ignore[attr-defined]
    wait_for(lambda: _state(eos, tid) is State.FAILED, RECOVERY_S, "the task FAILED")
    assert task.is_failed and task.restart_cause is None
    assert Registry.started["stall"] == 1
