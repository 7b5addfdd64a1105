"""``mm2 run`` re-reads its file without a restart, under producers that never pause.

Three clusters. At first: A->B (exactly-once, ``orders``), A->C (``orders``), B->C (``payments``). One SIGHUP
after an edit adds the ``events`` pattern to A->C, adds the flow C->A (``audit``) and removes B->C. Then:
the new pattern's records and the new flow's records are mirrored; B->C stops with its committed source
offsets covering exactly what it copied, and copies nothing more; A->B, untouched, loses and duplicates
nothing (read with the read_committed test reader) and none of its tasks restarts (its status topic, where
every task start and stop is recorded, gets no new task record). A broken file on SIGHUP is refused in one
ERROR line and the mirror goes on as it was.

With ``--watch-config``, saving the file is enough; a setting that needs a restart is named in one WARN line
and kept, while the connector setting saved with it is applied.
"""

from __future__ import annotations

import json
import signal
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

from embedded_kafka import KafkaCluster, free_port
from tests.e2e.mm2_helpers import Mm2Process, eventually, mm2_properties, write_properties
from tests.e2e.sequenced_producer import SequencedProducer, TailReader, compare, decode, sequences
from tests.oracle.committed_reader import read_topic_committed

PARTITIONS = 2
STARTUP_S = 240.0
STEP_S = 180.0


def _copied(cluster: KafkaCluster, topic: str) -> dict[int, list[int]]:
    """Per partition, the sequence numbers of a topic no longer written to (empty while it does not exist)."""
    return sequences(cluster, topic) if topic in cluster.topic_names() else {}


class _Tail:
    """Follows a topic still being written (reading it to its end would chase the tail): has it reached marks?"""

    def __init__(self, cluster: KafkaCluster, topic: str) -> None:
        self._cluster, self._topic = cluster, topic
        self._reader: TailReader | None = None

    def reached(self, marks: dict[int, int]) -> bool:
        if self._reader is None:
            if self._topic not in self._cluster.topic_names():
                return False
            self._reader = TailReader(self._cluster, self._topic, PARTITIONS)
        return self._reader.reached(marks)

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()


def _committed(cluster: KafkaCluster, topic: str) -> dict[int, list[int]]:
    """The same, as a read_committed consumer sees it (applied from the transaction markers)."""
    if topic not in cluster.topic_names():
        return {}
    out: dict[int, list[int]] = {}
    for partition, log in read_topic_committed(cluster, topic).items():
        out[partition] = [decode(record.value)[1] for record in log.committed]
    return out


def _reached(seqs: dict[int, list[int]], marks: dict[int, int]) -> bool:
    return all(max(seqs.get(p, []), default=-1) >= mark for p, mark in marks.items())


def _task_records(cluster: KafkaCluster, status_topic: str) -> list[tuple[bytes, bytes]]:
    """Every task status record of a flow (a task's every start and stop writes one), in offset order."""
    return [
        (m.key() or b"", m.value() or b"")
        for msgs in cluster.read_all(status_topic).values()
        for m in msgs
        if (m.key() or b"").startswith(b"status-task-")
    ]


def _committed_next_offsets(cluster: KafkaCluster, source: str, topic: str) -> dict[int, int]:
    """Partition -> next offset to copy, from a flow's committed source offsets on its target."""
    from mirror.driver.status import OffsetFold, read_topic

    fold = OffsetFold(source)
    read_topic({"bootstrap.servers": cluster.bootstrap_servers}, f"mm2-offsets.{source}.internal", fold.apply, 30)
    return {p: o + 1 for (t, p), o in fold.offsets.items() if t == topic}


def test_sighup_adds_a_pattern_and_a_flow_removes_a_flow_and_refuses_a_broken_file(
    three_clusters: tuple[KafkaCluster, KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    a, b, c = three_clusters
    sources = {"orders": a, "events": a, "payments": b, "audit": c}
    for topic, cluster in sources.items():
        cluster.create_topic(topic, PARTITIONS)
    producers = {
        topic: SequencedProducer(cluster, topic, PARTITIONS, burst=5, interval=0.3)
        for topic, cluster in sources.items()
    }
    before = mm2_properties(
        {"A": a, "B": b, "C": c},
        ["A->B", "A->C", "B->C"],
        **{
            "A->B.topics": "orders",
            "A->C.topics": "orders",
            "B->C.topics": "payments",
            # the unchanged flow is exactly-once (Apache's dedicated mode needs the internal REST API for it)
            "B.exactly.once.source.support": "enabled",
            "dedicated.mode.enable.internal.rest": "true",
            "listeners": f"http://127.0.0.1:{free_port()}",
        },
    )
    after = {k: v for k, v in before.items() if not k.startswith("B->C.")}  # B->C removed
    after |= {
        "A->C.topics": "orders, events",  # a pattern added to a running flow
        "C->A.enabled": "true",
        "C->A.emit.heartbeats.enabled": "true",
        "C->A.topics": "audit",
    }  # a new flow
    config = write_properties(tmp_path / "mm2.properties", before)
    for producer in producers.values():
        producer.start()
    tails = {
        "A->C orders": _Tail(c, "A.orders"),
        "B->C": _Tail(c, "B.payments"),
        "A->C events": _Tail(c, "A.events"),
        "C->A": _Tail(a, "C.audit"),
    }
    mm2 = Mm2Process(config, log_dir=tmp_path)
    try:
        marks = {t: p.next_seqs() for t, p in producers.items()}
        eventually(lambda: _reached(_committed(b, "A.orders"), marks["orders"]), STARTUP_S, "A->B copying", mm2, 2)
        eventually(lambda: tails["A->C orders"].reached(marks["orders"]), STEP_S, "A->C copying", mm2, 2)
        eventually(lambda: tails["B->C"].reached(marks["payments"]), STEP_S, "B->C copying", mm2, 2)
        assert "A.events" not in c.topic_names() and "C.audit" not in a.topic_names()
        ab_tasks = _task_records(b, "mm2-status.A.internal")
        ac_tasks = _task_records(c, "mm2-status.A.internal")
        assert ab_tasks and ac_tasks, "the flows' tasks recorded their start"

        write_properties(config, after)
        mm2.proc.send_signal(signal.SIGHUP)
        eventually(lambda: "Reload applied" in mm2.output() or None, STEP_S, "the reload applied", mm2)
        assert "Herder for B->C stopped" in mm2.output() and "Herder for C->A started" in mm2.output()

        # the removed flow: stopped with its offsets flushed, and copying nothing more
        copied = _copied(c, "B.payments")
        assert _committed_next_offsets(c, "B", "payments") == {p: len(s) for p, s in copied.items()}
        mark = {p: s + 10 for p, s in producers["payments"].next_seqs().items()}
        eventually(
            lambda: all(producers["payments"].acked_through()[p] >= m for p, m in mark.items()),
            STEP_S,
            "payments written after the stop",
        )
        assert _copied(c, "B.payments") == copied

        # the new pattern and the new flow mirror, while the unchanged flows go on
        marks = {t: p.next_seqs() for t, p in producers.items()}
        eventually(lambda: tails["A->C events"].reached(marks["events"]), STEP_S, "A->C copying events", mm2, 2)
        eventually(lambda: tails["C->A"].reached(marks["audit"]), STEP_S, "C->A copying", mm2, 2)
        eventually(lambda: _reached(_committed(b, "A.orders"), marks["orders"]), STEP_S, "A->B going on", mm2, 2)

        # a broken file: refused in one line, nothing changes
        write_properties(config, {**after, "C->D.enabled": "true"})
        mm2.proc.send_signal(signal.SIGHUP)
        eventually(lambda: "Reload refused" in mm2.output() or None, STEP_S, "the broken file refused", mm2)
        lines = mm2.output().splitlines()
        refused = [i for i, line in enumerate(lines) if "Reload refused" in line]
        assert len(refused) == 1 and " ERROR " in lines[refused[0]], refused
        assert "unknown cluster alias 'D'" in lines[refused[0]]
        following = lines[refused[0] + 1 : refused[0] + 2]
        assert all(line[:2] == "20" for line in following), following  # one line: no traceback, no continuation
        assert mm2.output().count("Reload applied") == 1
        marks = {t: p.next_seqs() for t, p in producers.items()}
        eventually(lambda: tails["A->C events"].reached(marks["events"]), STEP_S, "A->C after the refusal", mm2, 2)
        eventually(lambda: _reached(_committed(b, "A.orders"), marks["orders"]), STEP_S, "A->B after it", mm2, 2)

        for producer in producers.values():
            producer.finish()
        copies = {
            "orders": (b, "A.orders", _committed),
            "events": (c, "A.events", _copied),
            "audit": (a, "C.audit", _copied),
        }
        for topic, (target, remote, read) in copies.items():
            eventually(
                lambda t=topic, c_=target, r=remote, rd=read: (
                    not compare(  # type: ignore[misc]
                        sequences(sources[t], t), rd(c_, r)
                    ).lost
                ),
                STEP_S,
                f"every {topic} record in {remote}",
                mm2,
                2,
            )
        payments = sequences(b, "payments")  # what B->C copied before it stopped: a prefix of each partition
        assert all(copied[p] == payments[p][: len(copied[p])] for p in copied)
        orders = compare(sequences(a, "orders"), _committed(b, "A.orders"))
        assert not orders.lost and not orders.out_of_order and sum(orders.duplicates.values()) == 0, orders.summary()
        assert sum(orders.records.values()) >= 100, orders.summary()
        assert all(log.open == 0 for log in read_topic_committed(b, "A.orders").values())
        assert not compare(sequences(a, "orders"), _copied(c, "A.orders")).lost
        assert _task_records(b, "mm2-status.A.internal") == ab_tasks, "a task of the unchanged flow A->B restarted"
        # the same look at the changed flow A->C sees its reconfigured source task stop and start again
        restarted = {key for key, _ in Counter(_task_records(c, "mm2-status.A.internal")) - Counter(ac_tasks)}
        assert b"status-task-MirrorSourceConnector-0" in restarted, restarted
        assert mm2.terminate(90) == 0, mm2.output()[-3000:]
        assert "Traceback" not in mm2.output()
    finally:
        for producer in producers.values():
            if producer.is_alive():
                producer.finish()
        for tail in tails.values():
            tail.close()
        mm2.close()


def test_watch_config_applies_a_saved_file_and_names_what_needs_a_restart(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    a, b = two_clusters
    for topic in ("orders", "events"):
        a.create_topic(topic, PARTITIONS)
    producers = {t: SequencedProducer(a, t, PARTITIONS, burst=5, interval=0.3) for t in ("orders", "events")}
    before = mm2_properties({"A": a, "B": b}, ["A->B"], **{"A->B.topics": "orders"})
    config = write_properties(tmp_path / "mm2.properties", before)
    for producer in producers.values():
        producer.start()
    tails = {t: _Tail(b, f"A.{t}") for t in producers}
    mm2 = Mm2Process(config, "--watch-config", log_dir=tmp_path, env={"MM2_WATCH_CONFIG_INTERVAL_S": "1"})
    try:
        marks = {t: p.next_seqs() for t, p in producers.items()}
        eventually(lambda: tails["orders"].reached(marks["orders"]), STARTUP_S, "A->B copying", mm2, 2)
        write_properties(config, {**before, "A->B.topics": "orders, events", "B.offset.flush.interval.ms": "1000"})
        eventually(lambda: tails["events"].reached(marks["events"]), STEP_S, "the added pattern", mm2, 2)
        warnings = [line for line in mm2.output().splitlines() if " WARNING " in line and "Reload" in line]
        assert len(warnings) == 1 and "B.offset.flush.interval.ms" in warnings[0], warnings
        assert "file changed" in mm2.output()
        for producer in producers.values():
            producer.finish()
        for topic in producers:
            eventually(
                lambda t=topic: not compare(sequences(a, t), _copied(b, f"A.{t}")).lost,  # type: ignore[misc]
                STEP_S,
                f"every {topic} record on B",
                mm2,
                2,
            )
        assert mm2.terminate(90) == 0, mm2.output()[-3000:]
        assert "Traceback" not in mm2.output()
    finally:
        for producer in producers.values():
            if producer.is_alive():
                producer.finish()
        for tail in tails.values():
            tail.close()
        mm2.close()


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def test_two_nodes_each_reread_their_file_and_converge(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    a, b = two_clusters
    for topic in ("orders", "events"):
        a.create_topic(topic, PARTITIONS)
    producers = {t: SequencedProducer(a, t, PARTITIONS, burst=5, interval=0.3) for t in ("orders", "events")}
    # one flow shared by two nodes (followers send their task configs to the leader over the internal REST API)
    props = mm2_properties(
        {"A": a, "B": b},
        ["A->B"],
        **{"A->B.topics": "orders", "tasks.max": str(PARTITIONS), "dedicated.mode.enable.internal.rest": "true"},
    )
    ports = [free_port(), free_port()]
    configs = [
        write_properties(tmp_path / f"mm2-{i}.properties", {**props, "listeners": f"http://127.0.0.1:{port}"})
        for i, port in enumerate(ports)
    ]
    for producer in producers.values():
        producer.start()
    tails = {t: _Tail(b, f"A.{t}") for t in producers}
    nodes = [Mm2Process(config, log_dir=tmp_path, name=f"mm2-{i}") for i, config in enumerate(configs)]
    try:
        marks = {t: p.next_seqs() for t, p in producers.items()}
        eventually(lambda: tails["orders"].reached(marks["orders"]), STARTUP_S, "A->B copying", nodes[0], 2)

        def source_config(port: int) -> dict[str, str]:
            config: dict[str, str] = _get_json(f"http://127.0.0.1:{port}/A/B/connectors/MirrorSourceConnector/config")
            return config

        # each node re-reads its own file, one after the other; the flow's leader writes the new config
        for node, config in zip(nodes, configs, strict=True):
            text = config.read_text().replace("A->B.topics = orders\n", "A->B.topics = orders, events\n")
            config.write_text(text)
            node.proc.send_signal(signal.SIGHUP)
            eventually(
                lambda n=node: "Reload applied" in n.output() or None,
                STEP_S,  # type: ignore[misc]
                "the node's reload applied",
                node,
            )
        eventually(
            lambda: all(source_config(p)["topics"] == "orders, events" for p in ports),
            STEP_S,
            "both nodes serving the new connector config",
            nodes[0],
        )
        eventually(lambda: tails["events"].reached(marks["events"]), STEP_S, "the added pattern mirrored", nodes[0], 2)
        writes = sum(
            n.output().split("Re-reading", 1)[1].count("wrote the MirrorSourceConnector config") for n in nodes
        )
        assert writes == 1, "the flow's leader alone writes the connector config"
        for producer in producers.values():
            producer.finish()
        for topic in producers:
            eventually(
                lambda t=topic: not compare(sequences(a, t), _copied(b, f"A.{t}")).lost,  # type: ignore[misc]
                STEP_S,
                f"every {topic} record on B",
                nodes[0],
                2,
            )
        for node in nodes:
            assert node.terminate(90) == 0, node.output()[-3000:]
            assert "Traceback" not in node.output()
    finally:
        for producer in producers.values():
            if producer.is_alive():
                producer.finish()
        for tail in tails.values():
            tail.close()
        for node in nodes:
            node.close()
