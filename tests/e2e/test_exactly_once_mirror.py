"""``mm2 run`` with ``B.exactly.once.source.support = enabled`` through SIGKILLs of the driver.

Two flows run side by side on the same clusters, each its own topic, group and internal topics, with a
producer writing to each source topic without pause: one exactly-once, one with the default
at-least-once delivery. Both drivers are SIGKILLed and restarted twice while the records flow. Then
B is read with the suite's read_committed reader (it applies the transaction markers itself, since
Tansu shows aborted records to read_committed consumers): the exactly-once copy holds every record
exactly once, in order; the at-least-once copy, under the same faults, shows duplicates (the default
``offset.flush.interval.ms`` of 60 s: a restarted driver re-copies what it copied since the last
flush), so the test can tell the two apart.

The zombie case (a node frozen past its session timeout, then thawed) is not here: on Tansu, whose
read_committed consumers see aborted records, the node taking the task over can resume from the offset
record of the frozen node's aborted transaction and skip that transaction's records (issue 27's note).
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from connect_core.embedded import KafkaCluster, free_port
from connect_core.embedded.committed_reader import read_topic_committed
from tests.e2e.mm2_helpers import Mm2Process, eventually, mm2_properties, status_json, write_properties
from tests.e2e.sequenced_producer import MirrorReport, SequencedProducer, compare, decode, sequences

PARTITIONS = 2
RESTARTS = 2


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


def _flow(name: str, a: KafkaCluster, b: KafkaCluster, tmp_path: Path, exactly_once: bool) -> Flow:
    topic = f"orders-{name}"
    a.create_topic(topic, PARTITIONS)
    extra = {
        "topics": topic,
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


def test_exactly_once_mirror_survives_driver_sigkills_without_duplicates(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    a, b = two_clusters
    flows = [_flow("eos", a, b, tmp_path, True), _flow("alo", a, b, tmp_path, False)]
    try:
        for flow in flows:
            flow.producer.start()
        for round_ in range(RESTARTS + 1):
            marks = {f.name: f.producer.next_seqs() for f in flows}
            for flow in flows:
                flow.proc = Mm2Process(flow.config, log_dir=tmp_path, name=f"mm2-{flow.name}-{round_}")
            for flow in flows:
                # records written after this (re)start are on B: the driver copies again ...
                eventually(lambda f=flow, m=marks[flow.name]: _reached(b, f, m), 180,
                           f"{flow.name}: records written after start {round_} copied", flow.proc)
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
        assert status["delivery"] == "exactly-once"
        assert next(f for f in status_json(alo.config)["flows"] if f["flow"] == "A->B")["delivery"] == \
            "at-least-once"
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


def test_exactly_once_without_internal_rest_is_one_line_and_a_nonzero_exit(tmp_path: Path) -> None:
    config = tmp_path / "mm2.properties"
    config.write_text("clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:1\n"
                      "A->B.enabled = true\nB.exactly.once.source.support = enabled\n")
    result = subprocess.run([sys.executable, "-m", "mirror", "run", str(config)], capture_output=True, text=True,
                            timeout=60, stdin=subprocess.DEVNULL)
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
    props = mm2_properties({"A": a, "B": b}, ["A->B"], **{
        "topics": topic, "tasks.max": "1", "dedicated.mode.enable.internal.rest": "true",
        "B.exactly.once.source.support": "preparing"})
    urls = [f"http://127.0.0.1:{free_port()}" for _ in (1, 2)]
    configs = [write_properties(tmp_path / f"mm2-{i}.properties", {**props, "listeners": url})
               for i, url in enumerate(urls, 1)]
    producer = SequencedProducer(a, topic, PARTITIONS, burst=5, interval=0.2)
    flow = Flow("upgrade", topic, configs[0], producer)
    nodes = [Mm2Process(c, log_dir=tmp_path, name=f"mm2-node{i}-preparing") for i, c in enumerate(configs, 1)]
    try:
        producer.start()
        marks = producer.next_seqs()
        eventually(lambda: _reached(b, flow, marks), 120, "records copied while preparing", nodes[0])
        assert next(f for f in status_json(configs[0])["flows"] if f["flow"] == "A->B")["delivery"] == \
            "at-least-once (preparing exactly-once)"
        for i, config in enumerate(configs):
            assert nodes[i].terminate(60) == 0, nodes[i].output()[-3000:]
            nodes[i].close()
            write_properties(config, {**props, "listeners": urls[i], "B.exactly.once.source.support": "enabled"})
            nodes[i] = Mm2Process(config, log_dir=tmp_path, name=f"mm2-node{i + 1}-enabled")
            # a rolling upgrade moves on once the restarted node is back in the group
            eventually(lambda n=nodes[i]: "got assignment" in n.output(), 120, f"node {i + 1} rejoining", nodes[i])
            marks = producer.next_seqs()
            eventually(lambda m=marks: _reached(b, flow, m), 120, f"records copied after node {i + 1} upgraded",
                       nodes[i])
        assert next(f for f in status_json(configs[0])["flows"] if f["flow"] == "A->B")["delivery"] == \
            "exactly-once"
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
