"""``mm2 run`` with ``B.exactly.once.source.support = enabled`` through SIGKILLs of the driver, and a zombie.

Two flows run side by side on the same clusters, each its own topic, group and internal topics, with a
producer writing to each source topic without pause: one exactly-once, one with the default
at-least-once delivery. Both drivers are SIGKILLed and restarted twice while the records flow. Then
B is read with the suite's read_committed reader (it applies the transaction markers itself, since
Tansu shows aborted records to read_committed consumers): the exactly-once copy holds every record
exactly once, in order; the at-least-once copy, under the same faults, shows duplicates (the default
``offset.flush.interval.ms`` of 60 s: a restarted driver re-copies what it copied since the last
flush), so the test can tell the two apart.

Then a zombie: two ``mm2 run`` nodes share an exactly-once flow; the node running the source task is
frozen (SIGSTOP) past its session timeout, the other takes the task over (its producer re-initialises the
task's transactional id, which fences the frozen one and aborts the transaction it left open, records
and source offset alike), and the frozen node is thawed: its task fails as fenced instead of writing
on, and B still holds every record exactly once, in order. That the taking-over task resumes from the
last committed offset, not from the aborted one, is the worker's offset store's doing: it reads
read_committed from the transaction markers (Tansu shows aborted records to read_committed consumers).

The SIGKILL and zombie cases run on both copy paths (``batch.copy.enabled``): the record path, and the batch
path, where the source's batches are copied as bytes inside the task's transactions; the rolling upgrade
runs on the batch path.
"""

from __future__ import annotations

import random
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from embedded_kafka import KafkaCluster, free_port
from tests.e2e.mm2_helpers import (
    Mm2Process,
    eventually,
    group_settled,
    mm2_properties,
    status_json,
    write_properties,
)
from tests.e2e.sequenced_producer import MirrorReport, SequencedProducer, compare, decode, sequences
from tests.oracle.committed_reader import read_topic_committed

PARTITIONS = 2
RESTARTS = 2
#: How an instance of the source task ends when a newer one took its transactional id: fenced; or, frozen
#: inside its commit, with that commit failing (Tansu answers the fenced EndTxn with an error librdkafka
#: retries until the call times out), never with it going through.
_FENCED = re.compile(
    r"MirrorSourceConnector-0 was fenced out|"
    r"Failed to commit the transaction of task MirrorSourceConnector-0"
)
#: B's Connect offsets topic for flows from A (MirrorMaker's default name), and the source task's keys in it.
OFFSETS_TOPIC = "mm2-offsets.A.internal"
_SOURCE_OFFSET_KEY = b'["MirrorSourceConnector",'
#: The copy paths the key cases run on: each flow's ``batch.copy.enabled``, written explicitly.
COPY_PATHS = {"record": "false", "batch": "true"}
#: What the exactly-once source task logs at start when it copies batches.
_BATCH_TASK = (
    "Exactly-once source task MirrorSourceConnector-0 finished initialization and start (transaction "
    "boundary: poll, copy path: batch)"
)


@dataclass
class Flow:
    """One mode's flow: its topic, its producer, its mm2.properties and the current driver."""

    name: str
    topic: str
    config: Path
    producer: SequencedProducer
    proc: Mm2Process | None = None

    @property
    def remote(self) -> str:
        return f"A.{self.topic}"


def _flow(name: str, a: KafkaCluster, b: KafkaCluster, tmp_path: Path, exactly_once: bool, path: str) -> Flow:
    topic = f"orders-{name}"
    a.create_topic(topic, PARTITIONS)
    extra = {
        "topics": topic,
        "A->B.batch.copy.enabled": COPY_PATHS[path],
        "tasks.max": "1",
        # each flow its own Connect cluster on B (group, internal topics), so the two runs never meet
        "B.group.id": f"A-mm2-{name}",
        "B.offset.storage.topic": f"mm2-offsets.A.{name}.internal",
        "B.config.storage.topic": f"mm2-configs.A.{name}.internal",
        "B.status.storage.topic": f"mm2-status.A.{name}.internal",
        "listeners": f"http://127.0.0.1:{free_port()}",
    }
    if exactly_once:
        # what this test is about; Apache's dedicated mode needs the internal REST API for it (KIP-710)
        extra |= {"B.exactly.once.source.support": "enabled", "dedicated.mode.enable.internal.rest": "true"}
    props = mm2_properties({"A": a, "B": b}, ["A->B"], **extra)
    config = write_properties(tmp_path / f"mm2-{name}.properties", props)
    return Flow(name, topic, config, SequencedProducer(a, topic, PARTITIONS, burst=5, interval=0.2))


def _copied_seqs(b: KafkaCluster, flow: Flow) -> dict[int, list[int]]:
    """Per partition of the remote topic, the sequence numbers a read_committed consumer sees, in order."""
    if flow.remote not in b.topic_names():
        return {}
    out: dict[int, list[int]] = {}
    for partition, log in read_topic_committed(b, flow.remote).items():
        seqs = []
        for record in log.committed:
            written_to, seq = decode(record.value)
            assert written_to == partition
            seqs.append(seq)
        out[partition] = seqs
    return out


def _reached(b: KafkaCluster, flow: Flow, marks: dict[int, int]) -> bool:
    seqs = _copied_seqs(b, flow)
    return all(max(seqs.get(p, []), default=-1) >= mark for p, mark in marks.items())


def _complete(a: KafkaCluster, b: KafkaCluster, flow: Flow) -> bool:
    report = compare(sequences(a, flow.topic), _copied_seqs(b, flow))
    return not report.lost


@pytest.mark.parametrize("path", sorted(COPY_PATHS))
def test_exactly_once_mirror_survives_driver_sigkills_without_duplicates(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path, path: str
) -> None:
    a, b = two_clusters
    flows = [_flow("eos", a, b, tmp_path, True, path), _flow("alo", a, b, tmp_path, False, path)]
    try:
        for flow in flows:
            flow.producer.start()
        for round_ in range(RESTARTS + 1):
            marks = {f.name: f.producer.next_seqs() for f in flows}
            for flow in flows:
                flow.proc = Mm2Process(flow.config, log_dir=tmp_path, name=f"mm2-{flow.name}-{round_}")
            for flow in flows:
                # records written after this (re)start are on B: the driver copies again ...
                eventually(
                    lambda f=flow, m=marks[flow.name]: _reached(b, f, m),
                    180,
                    f"{flow.name}: records written after start {round_} copied",
                    flow.proc,
                )
            if round_ == RESTARTS:
                break
            for flow in flows:  # ... and is killed mid-stream: no flush, no commit, no LeaveGroup
                assert flow.proc is not None
                flow.proc.proc.kill()
                flow.proc.proc.wait(10)
                flow.proc.close()
        eos, alo = flows
        assert eos.proc is not None
        status = next(f for f in status_json(eos.config)["flows"] if f["flow"] == "A->B")
        assert status["delivery"] == "exactly-once" and status["copy_path"] == path
        assert (_BATCH_TASK in eos.proc.output()) == (path == "batch"), eos.proc.output()[-3000:]
        assert next(f for f in status_json(alo.config)["flows"] if f["flow"] == "A->B")["delivery"] == "at-least-once"
        for flow in flows:
            flow.producer.finish()
        for flow in flows:
            eventually(lambda f=flow: _complete(a, b, f), 180, f"{flow.name}: every record on B", flow.proc)
        reports: dict[str, MirrorReport] = {}
        for flow in flows:
            reports[flow.name] = compare(sequences(a, flow.topic), _copied_seqs(b, flow))
            assert flow.proc is not None
            assert flow.proc.terminate(60) == 0, flow.proc.output()[-3000:]
        eos_report, alo_report = reports["eos"], reports["alo"]
        logs = read_topic_committed(b, eos.remote)
        assert all(log.open == 0 for log in logs.values())
        assert not eos_report.lost and not eos_report.out_of_order, eos_report.summary()
        assert sum(eos_report.duplicates.values()) == 0, eos_report.summary()
        assert sum(eos_report.records.values()) >= 100, eos_report.summary()
        # the same faults without exactly-once: nothing lost, but re-copied records
        assert not alo_report.lost and not alo_report.out_of_order, alo_report.summary()
        assert sum(alo_report.duplicates.values()) > 0, alo_report.summary()
    finally:
        for flow in flows:
            if flow.producer.is_alive():
                flow.producer.finish()
            if flow.proc is not None:
                flow.proc.close()


def _source_offset_partitions(b: KafkaCluster) -> list[int]:
    """The partitions of B's offsets topic that hold the source task's committed offsets.

    Read once: the test reader waits on each empty partition of the topic's 25, so a full read is slow.
    """
    return sorted(
        p
        for p, log in read_topic_committed(b, OFFSETS_TOPIC).items()
        if any((record.key or b"").startswith(_SOURCE_OFFSET_KEY) for record in log.committed)
    )


def _open_source_offsets(b: KafkaCluster, partitions: list[int]) -> int:
    """Offset records of the source task in transactions with no marker yet, on B's offsets topic."""
    return sum(
        1
        for log in read_topic_committed(b, OFFSETS_TOPIC, partitions).values()
        for record in log.undecided
        if (record.key or b"").startswith(_SOURCE_OFFSET_KEY)
    )


def _freeze_inside_a_commit(node: Mm2Process, b: KafkaCluster, partitions: list[int], attempts: int = 600) -> None:
    """SIGSTOP ``node`` at a moment its source task's open transaction already holds the task's offset record
    (between writing the offsets and the commit): the case where the task's next instance must not resume
    from that offset. Freezes and thaws again until one lands there; the second look, a second later,
    makes sure a commit already on its way to the broker did not close the transaction after all."""
    for _ in range(attempts):
        node.proc.send_signal(signal.SIGSTOP)
        if _open_source_offsets(b, partitions):
            time.sleep(1.0)
            if _open_source_offsets(b, partitions):
                return
        node.proc.send_signal(signal.SIGCONT)
        time.sleep(random.uniform(0.0, 0.1))  # another phase of the task's poll/commit cycle next time
    raise AssertionError(f"no freeze in {attempts} landed inside a commit of the source task")


@pytest.mark.parametrize("path", sorted(COPY_PATHS))
def test_a_thawed_zombie_is_fenced_and_the_copy_stays_exactly_once(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path, path: str
) -> None:
    a, b = two_clusters
    topic = "orders-zombie"
    a.create_topic(topic, PARTITIONS)
    props = mm2_properties(
        {"A": a, "B": b},
        ["A->B"],
        **{
            "topics": topic,
            "A->B.batch.copy.enabled": COPY_PATHS[path],
            "tasks.max": "1",
            "B.exactly.once.source.support": "enabled",
            "dedicated.mode.enable.internal.rest": "true",
            # a departed node's tasks wait this long for it (Java default 5 min), then move to the other node
            "B.scheduled.rebalance.max.delay.ms": "8000",
            # how long the thawed zombie's commit may wait before it fails (Java's max.block.ms, 60 s by default):
            # the test broker answers a fenced EndTxn with an error the client retries until then, where Kafka
            # refuses it at once. Half the default, and ample for the other node's own init of the id.
            "B.producer.max.block.ms": "30000",
        },
    )
    configs = [
        write_properties(tmp_path / f"mm2-{i}.properties", {**props, "listeners": f"http://127.0.0.1:{free_port()}"})
        for i in (1, 2)
    ]
    producer = SequencedProducer(a, topic, PARTITIONS, burst=5, interval=0.2)
    flow = Flow("zombie", topic, configs[0], producer)
    nodes = [Mm2Process(c, log_dir=tmp_path, name=f"mm2-node{i}") for i, c in enumerate(configs, 1)]
    zombie: Mm2Process | None = None
    try:
        producer.start()
        owner = eventually(lambda: _source_task_owner(nodes), 120, "one node running the source task", nodes[0])
        marks = producer.next_seqs()
        eventually(lambda: _reached(b, flow, marks), 120, "records copied", owner)
        zombie, survivor = owner, next(n for n in nodes if n is not owner)
        offset_partitions = eventually(
            lambda: _source_offset_partitions(b) or None, 120, "the source task's offsets committed", owner
        )
        # frozen with a transaction open that holds records and the offset after them: no heartbeat, no commit
        _freeze_inside_a_commit(zombie, b, offset_partitions)
        eventually(
            lambda: _source_task_owner([survivor]) is survivor, 120, "the other node taking the task over", survivor
        )
        marks = producer.next_seqs()
        eventually(lambda: _reached(b, flow, marks), 120, "records copied by the other node", survivor)
        zombie.proc.send_signal(signal.SIGCONT)  # thawed: it still believes it runs the task
        assert zombie is not None
        # Two instances of the task now hold the same transactional id. Kafka's rule: the newest
        # init_transactions wins, so the thawed zombie (its epoch is the older) is the one fenced, its commit
        # refused; the instance that took over is never fenced, and copies on.
        eventually(
            lambda: _FENCED.search(zombie.output()) or None, 180, "the thawed zombie failing as fenced", survivor
        )
        assert not _FENCED.search(survivor.output()), survivor.output()[-3000:]
        # A failed task stays FAILED where it failed; the operator takes that node out.
        runner = survivor
        zombie.terminate(60)
        marks = producer.next_seqs()
        eventually(lambda: _reached(b, flow, marks), 120, "records still copied after the thaw", runner)
        producer.finish()
        eventually(lambda: _complete(a, b, flow), 180, "every record on B", runner)
        report = compare(sequences(a, topic), _copied_seqs(b, flow))
        assert not report.lost and not report.out_of_order, report.summary()
        assert sum(report.duplicates.values()) == 0, report.summary()
        assert all(log.open == 0 for log in read_topic_committed(b, flow.remote).values())
        # the frozen transaction's offset record was aborted (the other node's producer fenced it), and the
        # task resumed from the offset before it: nothing lost above, nothing copied twice
        assert _open_source_offsets(b, offset_partitions) == 0
        assert sum(log.aborted for log in read_topic_committed(b, OFFSETS_TOPIC, offset_partitions).values()) >= 1
        assert not _FENCED.search(survivor.output()), survivor.output()[-3000:]  # the survivor never was
        assert (_BATCH_TASK in survivor.output()) == (path == "batch"), survivor.output()[-3000:]
        assert runner.terminate(60) == 0, runner.output()[-3000:]
    finally:
        if zombie is not None and zombie.alive():
            zombie.proc.send_signal(signal.SIGCONT)
        if producer.is_alive():
            producer.finish()
        for node in nodes:
            node.close()


def test_exactly_once_without_internal_rest_is_one_line_and_a_nonzero_exit(tmp_path: Path) -> None:
    config = tmp_path / "mm2.properties"
    config.write_text(
        "clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:1\n"
        "A->B.enabled = true\nB.exactly.once.source.support = enabled\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "mirror", "run", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert "B.exactly.once.source.support" in lines[0] and "dedicated.mode.enable.internal.rest = true" in lines[0]


def _source_task_owner(procs: list[Mm2Process]) -> Mm2Process | None:
    """The node whose latest assignment holds MirrorSourceConnector-0 (its herder logs each assignment)."""
    owners = []
    for proc in procs:
        lines = [ln for ln in proc.output().splitlines() if "got assignment:" in ln]
        if lines and "MirrorSourceConnector-0" in lines[-1].split("revoked=")[0]:
            owners.append(proc)
    return owners[0] if len(owners) == 1 else None


def test_preparing_then_enabled_rolling_upgrade_of_two_nodes_loses_and_duplicates_nothing(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    """Java's two-step upgrade: both nodes run ``preparing`` (at-least-once), then each in turn is stopped
    (SIGTERM) and started again with ``enabled``, while the producer writes without pause."""
    a, b = two_clusters
    topic = "orders-upgrade"
    a.create_topic(topic, PARTITIONS)
    props = mm2_properties(
        {"A": a, "B": b},
        ["A->B"],
        **{
            "topics": topic,
            "A->B.batch.copy.enabled": "true",
            "tasks.max": "1",
            "dedicated.mode.enable.internal.rest": "true",
            "B.exactly.once.source.support": "preparing",
        },
    )
    urls = [f"http://127.0.0.1:{free_port()}" for _ in (1, 2)]
    configs = [
        write_properties(tmp_path / f"mm2-{i}.properties", {**props, "listeners": url}) for i, url in enumerate(urls, 1)
    ]
    producer = SequencedProducer(a, topic, PARTITIONS, burst=5, interval=0.2)
    flow = Flow("upgrade", topic, configs[0], producer)
    nodes = [Mm2Process(c, log_dir=tmp_path, name=f"mm2-node{i}-preparing") for i, c in enumerate(configs, 1)]
    try:
        producer.start()
        marks = producer.next_seqs()
        eventually(lambda: _reached(b, flow, marks), 120, "records copied while preparing", nodes[0])
        assert (
            next(f for f in status_json(configs[0])["flows"] if f["flow"] == "A->B")["delivery"]
            == "at-least-once (preparing exactly-once)"
        )
        for i, config in enumerate(configs):
            # node by node, each once the group has settled (see group_settled)
            eventually(lambda: group_settled(nodes) is not None, 120, "the group settled", nodes[i])
            assert nodes[i].terminate(60) == 0, nodes[i].output()[-3000:]
            nodes[i].close()
            write_properties(config, {**props, "listeners": urls[i], "B.exactly.once.source.support": "enabled"})
            nodes[i] = Mm2Process(config, log_dir=tmp_path, name=f"mm2-node{i + 1}-enabled")
            # a rolling upgrade moves on once the restarted node is back in the group
            # (a starved machine starts it slowly: the wait runs while the node's log shows it moving)
            eventually(
                lambda n=nodes[i]: "got assignment" in n.output(),
                120,
                f"node {i + 1} rejoining",
                nodes[i],
                progress=lambda n=nodes[i]: len(n.output()),
            )
            marks = producer.next_seqs()
            eventually(
                lambda m=marks: _reached(b, flow, m),
                120,
                f"records copied after node {i + 1} upgraded",
                nodes[i],
                progress=lambda: sum(map(len, _copied_seqs(b, flow).values())),
            )
        assert next(f for f in status_json(configs[0])["flows"] if f["flow"] == "A->B")["delivery"] == "exactly-once"
        producer.finish()
        eventually(lambda: _complete(a, b, flow), 180, "every record on B", nodes[0])
        report = compare(sequences(a, topic), _copied_seqs(b, flow))
        assert not report.lost and not report.out_of_order, report.summary()
        assert sum(report.duplicates.values()) == 0, report.summary()
        for node in nodes:
            assert node.terminate(60) == 0, node.output()[-3000:]
        assert any("Exactly-once source task MirrorSourceConnector-0" in n.output() for n in nodes)
    finally:
        if producer.is_alive():
            producer.finish()
        for node in nodes:
            node.close()
