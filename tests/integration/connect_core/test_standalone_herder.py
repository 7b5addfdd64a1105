"""StandaloneHerder on a real broker: lifecycle over REST-shaped calls, and at-least-once across a SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from connect_core.herder.standalone import StandaloneHerder, build_standalone_herder
from connect_core.model import RestartRequest, State
from connect_core.storage.file_offsets import FileOffsetBackingStore
from connect_core.storage.offset_storage import OffsetStorageReaderImpl
from embedded_kafka import KafkaCluster
from tests.worker_plugins import BYTES, CONNECTOR, Registry

ROOT = Path(__file__).resolve().parents[3]


def wait_for(cond: Callable[[], bool], timeout: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if cond():
                return
        except Exception:
            pass
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def worker_props(cluster: KafkaCluster, offsets_file: Path) -> dict[str, str]:
    return {
        "bootstrap.servers": cluster.bootstrap_servers,
        "key.converter": BYTES,
        "value.converter": BYTES,
        "header.converter": BYTES,
        "offset.flush.interval.ms": "200",
        "offset.storage.file.filename": str(offsets_file),
        "listeners": "http://127.0.0.1:18083",
    }


def sources_seen(cluster: KafkaCluster, topic: str) -> list[tuple[int, int]]:
    out = []
    for msgs in cluster.read_all(topic).values():
        for m in msgs:
            p, n = (int(x) for x in m.key().decode()[1:].split("-"))
            out.append((p, n))
    return out


@pytest.fixture
def herder(kafka_cluster: KafkaCluster, tmp_path: Path) -> Iterator[StandaloneHerder]:
    Registry.reset()
    h = build_standalone_herder(worker_props(kafka_cluster, tmp_path / "offsets.json"))
    h.start()
    yield h
    h.stop()


def states(h: StandaloneHerder, name: str) -> tuple[State, list[State]]:
    s = h.connector_status(name)
    return s.connector.state, [t.state for _, t in sorted(s.tasks.items())]


def test_lifecycle(herder: StandaloneHerder, kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]) -> None:
    topic = kafka_cluster.create_topic(unique_name("life"), partitions=2)
    assert herder.kafka_cluster_id() == kafka_cluster.cluster_id
    assert herder.worker_id() == "127.0.0.1:18083"
    config = {"connector.class": CONNECTOR, "topic": topic, "records": "200", "source.partitions": "2",
              "tasks.max": "2", "batch": "20"}  # fmt: skip
    created, _ = herder.put_connector_config("life", config, False)
    assert created
    wait_for(lambda: {tuple(p.items()): o for p, o in herder.connector_offsets("life")}
             == {(("p", 0),): {"n": 199}, (("p", 1),): {"n": 199}}, what="all committed")  # fmt: skip
    assert len(sources_seen(kafka_cluster, topic)) == 400
    assert herder.connector_active_topics("life") == [topic]

    herder.pause_connector("life")
    wait_for(lambda: states(herder, "life") == (State.PAUSED, [State.PAUSED, State.PAUSED]), what="paused")
    herder.resume_connector("life")
    wait_for(lambda: states(herder, "life") == (State.RUNNING, [State.RUNNING, State.RUNNING]), what="resumed")

    herder.stop_connector("life")
    wait_for(lambda: states(herder, "life") == (State.STOPPED, []), what="stopped")
    herder.alter_connector_offsets("life", [({"p": 0}, {"n": 149})])
    herder.resume_connector("life")  # task 0 re-sends 150..199 of source partition 0
    wait_for(lambda: len(sources_seen(kafka_cluster, topic)) == 450, what="re-sent records after offset change")

    result = herder.restart_connector_and_tasks(RestartRequest("life", include_tasks=True))
    assert result is not None and result.connector.state is State.RESTARTING
    wait_for(lambda: states(herder, "life") == (State.RUNNING, [State.RUNNING, State.RUNNING]), what="restarted")

    herder.delete_connector_config("life")
    assert herder.connectors() == []
    assert herder.worker.task_ids() == set()


_CHILD = textwrap.dedent(
    """
    import json, sys, time
    sys.path.insert(0, {root!r})
    from connect_core.herder.standalone import build_standalone_herder
    props = json.loads(sys.argv[1]); config = json.loads(sys.argv[2])
    h = build_standalone_herder(props)
    h.start()
    h.put_connector_config("kill", config, False)
    print("started", flush=True)
    time.sleep(600)
    """
)


def test_at_least_once_across_sigkill(
    kafka_cluster: KafkaCluster, tmp_path: Path, unique_name: Callable[[str], str]
) -> None:
    topic = kafka_cluster.create_topic(unique_name("kill"), partitions=1)
    offsets_file = tmp_path / "offsets.json"
    props = worker_props(kafka_cluster, offsets_file)
    total = 3000
    config = {"connector.class": CONNECTOR, "topic": topic, "records": str(total), "source.partitions": "2",
              "tasks.max": "1", "batch": "10", "poll.delay": "0.005"}  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD.format(root=str(ROOT)), json.dumps(props), json.dumps(config)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT,
    )  # fmt: skip
    try:

        def committed() -> dict[int, int]:
            store = FileOffsetBackingStore(offsets_file)
            store.start()
            reader = OffsetStorageReaderImpl(store, "kill")
            return {p["p"]: o["n"] for p, o in reader.offsets([{"p": 0}, {"p": 1}]) if o is not None}

        # Let it commit at least a couple of times, then kill it hard mid-stream.
        wait_for(lambda: offsets_file.exists() and min(committed().values(), default=0) > 50, timeout=30,
                 what="child committed offsets")  # fmt: skip
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
    at_kill = committed()
    assert at_kill and all(n < total - 1 for n in at_kill.values()), f"child finished before the kill: {at_kill}"

    Registry.reset()
    h = build_standalone_herder(props)
    h.start()
    try:
        h.put_connector_config("kill", config, False)
        wait_for(lambda: committed() == {0: total - 1, 1: total - 1}, timeout=60, what="resumed run completes")
    finally:
        h.stop()
    seen = sources_seen(kafka_cluster, topic)
    for p in (0, 1):
        counts = Counter(n for q, n in seen if q == p)
        assert set(counts) == set(range(total)), f"records lost for source partition {p}"
        dups = {n for n, c in counts.items() if c > 1}
        # duplicates only from the window after the last commit before the kill
        assert all(n > at_kill[p] for n in dups), (p, at_kill[p], sorted(dups)[:5])
        # the restarted run resumed right after the committed offset, not from the beginning
        assert counts[0] == 1
