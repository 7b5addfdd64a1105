"""An exactly-once source task whose transactional producer fails without being fenced recovers: the
instance is replaced by a fresh one (same transactional.id, a new epoch) that resumes from the last
committed offsets; the task never reports FAILED, and a read_committed reader of the output holds every
record once, in order. A task that keeps failing is bounded: past its recovery budget it fails, saying so.

The trigger is a real one: the target broker stalls (SIGSTOP) past the producer's delivery timeout
(shortened for the test), so the open transaction's records time out and the transaction can only be
aborted (librdkafka: "requires epoch bump"). Before, that failed the task for good.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from connect_core.api.errors import ConnectError
from connect_core.embedded import KafkaCluster
from connect_core.embedded.committed_reader import read_topic_committed
from connect_core.model import ConnectorTaskId, State
from connect_core.runtime import worker as worker_module
from connect_core.runtime.exactly_once_source_task import ExactlyOnceWorkerSourceTask
from tests.integration.connect_core.test_exactly_once_source_task import Env, wait_for
from tests.worker_plugins import CONNECTOR, Registry

RECOVERY_S = 120.0
#: The task's producer gives up on a record after this long (the product's default is 60 s).
DELIVERY_TIMEOUT_MS = "2000"


@pytest.fixture
def eos(kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]) -> Iterator[Env]:
    """A distributed worker with exactly-once source support enabled, on the test's broker."""
    e = Env(kafka_cluster, unique_name)
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


def _run(env: Env, cluster: KafkaCluster, name: str, topic: str) -> ConnectorTaskId:
    conn = {"name": name, "connector.class": CONNECTOR, "topic": topic, "records": "1000000", "batch": "5",
            "poll.delay": "0.05", "producer.override.delivery.timeout.ms": DELIVERY_TIMEOUT_MS}  # fmt: skip
    return env.run_task(name, conn, {"poll.delay": "0.05"})


def _stall_until_replaced(env: Env, cluster: KafkaCluster, tid: ConnectorTaskId) -> ExactlyOnceWorkerSourceTask:
    """Stall the broker under a committing task until that instance gave up; the instance."""
    before = _committed(tid.connector)
    wait_for(lambda: _committed(tid.connector) > before + 10, RECOVERY_S, "the task committing")
    old = _instance(env, tid)
    try:
        cluster.pause()  # type: ignore[attr-defined]
    except NotImplementedError as e:
        pytest.skip(str(e))
    try:
        wait_for(lambda: not old.is_running, RECOVERY_S, "the stalled instance to give up")
    finally:
        cluster.resume()  # type: ignore[attr-defined]
    return old


def test_a_producer_failure_is_recovered_from_and_nothing_is_lost_or_duplicated(
    kafka_cluster: KafkaCluster, eos: Env, unique_name: Callable[[str], str]
) -> None:
    topic = kafka_cluster.create_topic(unique_name("eos-recover"), partitions=1)
    tid = _run(eos, kafka_cluster, "recover", topic)
    old = _stall_until_replaced(eos, kafka_cluster, tid)
    wait_for(lambda: _replaced(eos, tid, old), RECOVERY_S, "a fresh instance of the task")
    assert old.restart_cause is not None and not old.is_failed
    assert "timed out" in str(old.restart_cause)
    # the connector's task is started again, from the committed offsets
    wait_for(lambda: Registry.started["recover"] == 2, RECOVERY_S, "the connector's task started again")
    resumed = _committed("recover")
    wait_for(lambda: _committed("recover") > resumed + 30, RECOVERY_S, "commits after the restart")
    assert _state(eos, tid) is State.RUNNING
    eos.worker.stop_and_await_task(tid)
    last = _last_committed_offset(eos, "recover")
    log = read_topic_committed(kafka_cluster, topic, timeout_s=RECOVERY_S)[0]
    assert log.open == 0
    assert [r.value for r in log.committed] == [f"v0-{n}".encode() for n in range(last + 1)]


def test_a_task_that_keeps_failing_fails_once_its_budget_is_spent(
    kafka_cluster: KafkaCluster, eos: Env, unique_name: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker_module, "MAX_RECOVERIES", 1)
    topic = kafka_cluster.create_topic(unique_name("eos-budget"), partitions=1)
    tid = _run(eos, kafka_cluster, "budget", topic)
    old = _stall_until_replaced(eos, kafka_cluster, tid)
    wait_for(lambda: _replaced(eos, tid, old), RECOVERY_S, "a fresh instance of the task")
    _stall_until_replaced(eos, kafka_cluster, tid)  # the second failure within the window: past a budget of one
    wait_for(lambda: _state(eos, tid) is State.FAILED, RECOVERY_S, "the task FAILED")
    status = eos.status.get_task(tid)
    assert status is not None
    assert "failed more often than the 1 recoveries within 600 s it recovers from" in (status.trace or "")
    assert "fenced" not in (status.trace or "")
    # nothing restarts a failed task: the worker still holds the failed instance
    task = eos.worker.task(tid)
    assert task is not None and task.is_failed
    assert Registry.started["budget"] == 2
