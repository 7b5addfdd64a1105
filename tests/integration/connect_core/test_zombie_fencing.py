"""Zombie fencing (KIP-618) by a two-worker distributed cluster with ``exactly.once.source.support=enabled``.

"Zombies" are transactional producers holding the ids of a connector's tasks
(``<group.id>-<connector>-<task>``) with a transaction open, as a task of the previous generation
left running on a lost worker would. A new generation of task configs, or ``PUT
/connectors/{name}/fence`` on a connector whose latest task configs are not yet fenced, makes the
leader fence those ids: the zombie's commit fails and its records are aborted (read from the
markers with the suite's committed reader). The config topic then holds Java's task-count record,
``tasks-fencing-<connector>`` = ``{"task-count":n}``, after the task configs it covers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import KafkaException, Producer

from connect_core.herder.distributed.session_key import signature_headers
from embedded_kafka import KafkaCluster, free_port, unique_name
from mirror.cli.distributed_cmd import DistributedWorker
from tests.integration.connect_core.test_distributed_herder import (
    CONNECTOR,
    distributed_props,
    http,
    leader_and_follower,
    wait_for,
)
from tests.oracle.committed_reader import PartitionLog, read_topic_committed

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

Workers = list[tuple[DistributedWorker, str]]


def start_workers(cluster: KafkaCluster, count: int, exactly_once: str) -> tuple[str, Workers]:
    prefix = unique_name("zf")
    out: Workers = []
    try:
        for _ in range(count):
            port = free_port()
            props = distributed_props(cluster, prefix, port, **{"exactly.once.source.support": exactly_once})
            w = DistributedWorker(props)
            out.append((w, f"http://127.0.0.1:{port}"))
            w.start()
        wait_for("the workers joined", lambda: all(w.herder is not None and w.herder.is_ready() for w, _ in out), 90)
        return prefix, out
    except BaseException:
        stop_workers(out)
        raise


def stop_workers(workers: Workers) -> None:
    for w, _ in workers:
        w.stop()


@pytest.fixture
def eos_workers(kafka_cluster: KafkaCluster) -> Iterator[tuple[str, Workers]]:
    prefix, workers = start_workers(kafka_cluster, 2, "enabled")
    try:
        yield prefix, workers
    finally:
        stop_workers(workers)


class Zombies:
    """Transactional producers with a connector's task ids, each with a transaction open on ``topic``.

    What shows they were fenced is the broker's doing, read from the log: their transactions got ABORT
    markers (Kafka writes one when a newer producer initialises the same id) and nothing of theirs
    is committed. Their own commit then fails: PRODUCER_FENCED on Apache Kafka; on Tansu librdkafka
    retries the refused EndTxn until its timeout (broker-notes.md: Tansu answers ProducerFenced).
    """

    def __init__(self, cluster: KafkaCluster, group: str, connector: str, tasks: int, topic: str) -> None:
        self.cluster = cluster
        self.topic = topic
        self.producers: list[Producer] = []
        for task in range(tasks):
            p = cluster.producer(**{"transactional.id": f"{group}-{connector}-{task}", "enable.idempotence": True})
            p.init_transactions(30)
            p.begin_transaction()
            p.produce(topic, f"zombie-{task}".encode(), partition=0)
            assert p.flush(30) == 0
            self.producers.append(p)
        log = self._log()
        assert log.open == tasks, log  # their transactions are open: nothing has fenced them yet
        self.aborted_before = log.aborted

    def _log(self) -> PartitionLog:
        return read_topic_committed(self.cluster, self.topic, [0])[0]

    def assert_fenced(self) -> None:
        log = self._log()
        assert log.open == 0 and log.aborted == self.aborted_before + len(self.producers), log
        assert not [r.value for r in log.committed if (r.value or b"").startswith(b"zombie-")], log
        for p in self.producers:
            with pytest.raises(KafkaException):
                p.commit_transaction(2)


def config_records(cluster: KafkaCluster, prefix: str) -> list[tuple[str, bytes | None]]:
    records = cluster.read_all(f"{prefix}-configs")[0]
    return [((m.key() or b"").decode(), m.value()) for m in records]


def task_count_record_after_commit(cluster: KafkaCluster, prefix: str, connector: str) -> bytes | None:
    """The latest ``tasks-fencing-`` value if it follows the latest ``commit-`` record of ``connector``."""
    records = config_records(cluster, prefix)
    commits = [i for i, (k, _) in enumerate(records) if k == f"commit-{connector}"]
    fencing = [i for i, (k, _) in enumerate(records) if k == f"tasks-fencing-{connector}"]
    if not commits or not fencing or fencing[-1] < commits[-1]:
        return None
    return records[fencing[-1]][1]


def running_tasks(url: str, connector: str, count: int) -> Callable[[], bool]:
    def check() -> bool:
        code, st = http("GET", f"{url}/connectors/{connector}/status")
        return (code == 200 and st["connector"]["state"] == "RUNNING" and len(st["tasks"]) == count
                and all(t["state"] == "RUNNING" for t in st["tasks"]))  # fmt: skip

    return check


def create(url: str, name: str, tasks: int, **extra: str) -> None:
    code, body = http(
        "POST",
        f"{url}/connectors",
        {"name": name, "config": {"connector.class": CONNECTOR, "tasks.max": str(tasks), **extra}},
    )
    assert code == 201, body


def signed_fence(herder: Any, url: str, connector: str) -> tuple[int, Any]:
    wait_for("a session key", lambda: herder._session_key is not None)
    return http(
        "PUT",
        f"{url}/connectors/{connector}/fence",
        raw=b"",
        headers=signature_headers(herder._session_key, "HmacSHA256", b""),
    )


def test_a_new_generation_of_tasks_fences_the_previous_ones_transactional_ids(
    kafka_cluster: KafkaCluster, eos_workers: tuple[str, Workers]
) -> None:
    prefix, workers = eos_workers
    leader, leader_url, follower, _ = leader_and_follower(workers)
    create(leader_url, "z", 2)
    wait_for("z's 2 tasks RUNNING", running_tasks(leader_url, "z", 2), 90)
    # First exactly-once generation: nothing to fence, the count is recorded for the next round.
    assert task_count_record_after_commit(kafka_cluster, prefix, "z") == b'{"task-count":2}'

    topic = unique_name("zombie-out")
    kafka_cluster.create_topic(topic, partitions=1)
    zombies = Zombies(kafka_cluster, prefix, "z", 2, topic)

    # Reconfigure to 3 tasks: the new generation starts only after ids 0 and 1 are fenced.
    code, body = http("PUT", f"{leader_url}/connectors/z/config",
                      {"connector.class": CONNECTOR, "tasks.max": "3", "marker": "v2"})  # fmt: skip
    assert code == 200, body
    wait_for("z's 3 new tasks RUNNING", running_tasks(leader_url, "z", 3), 90)
    assert task_count_record_after_commit(kafka_cluster, prefix, "z") == b'{"task-count":3}'
    zombies.assert_fenced()
    # Tasks ran on both workers, so the follower's went through the leader's fence endpoint.
    code, st = http("GET", f"{leader_url}/connectors/z/status")
    assert {t["worker_id"] for t in st["tasks"]} == {leader.worker_id(), follower.worker_id()}

    # Modifying offsets fences first (Java), so no task of the stopped generation commits after the reset.
    zombies = Zombies(kafka_cluster, prefix, "z", 3, topic)
    assert http("PUT", f"{leader_url}/connectors/z/stop")[0] == 204
    code, body = http("DELETE", f"{leader_url}/connectors/z/offsets")
    assert code == 200, body
    assert task_count_record_after_commit(kafka_cluster, prefix, "z") == b'{"task-count":0}'
    zombies.assert_fenced()


def test_fence_endpoint_on_follower_and_leader(kafka_cluster: KafkaCluster, eos_workers: tuple[str, Workers]) -> None:
    prefix, workers = eos_workers
    leader, leader_url, follower, follower_url = leader_and_follower(workers)
    create(leader_url, "f", 2)
    wait_for("f's 2 tasks RUNNING", running_tasks(leader_url, "f", 2), 90)
    topic = unique_name("zombie-out")
    kafka_cluster.create_topic(topic, partitions=1)

    for herder, url in ((follower, follower_url), (leader, leader_url)):
        zombies = Zombies(kafka_cluster, prefix, "f", 2, topic)
        # Stopping writes an empty set of task configs: the connector needs fencing, nothing does it yet.
        assert http("PUT", f"{leader_url}/connectors/f/stop")[0] == 204
        wait_for("f stopped", lambda: http("GET", f"{leader_url}/connectors/f/status")[1]["connector"]["state"]
                 == "STOPPED")  # fmt: skip
        assert task_count_record_after_commit(kafka_cluster, prefix, "f") is None

        code, body = signed_fence(herder, url, "f")
        assert code == 204, body
        assert task_count_record_after_commit(kafka_cluster, prefix, "f") == b'{"task-count":0}'
        zombies.assert_fenced()
        # Fenced already: a second request has nothing to do.
        assert signed_fence(herder, url, "f")[0] == 204

        assert http("PUT", f"{leader_url}/connectors/f/resume")[0] == 202
        wait_for("f's 2 tasks RUNNING again", running_tasks(leader_url, "f", 2), 90)

    code, body = http("PUT", f"{follower_url}/connectors/f/fence", raw=b"")
    assert code == 400 and body["message"] == "Internal request missing required signature", body
    code, body = signed_fence(leader, leader_url, "nope")
    assert code == 404 and body == {"error_code": 404, "message": "Connector nope not found"}


def test_fence_endpoint_without_exactly_once_answers_400(kafka_cluster: KafkaCluster) -> None:
    _, workers = start_workers(kafka_cluster, 1, "disabled")
    try:
        ((worker, url),) = workers
        create(url, "d", 1)
        wait_for("d's task RUNNING", running_tasks(url, "d", 1), 60)
        code, body = signed_fence(worker.herder, url, "d")
        assert code == 400, body
        assert body["error_code"] == 400 and "exactly.once.source.support=enabled" in body["message"], body
    finally:
        stop_workers(workers)
