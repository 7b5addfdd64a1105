"""``mm2 run`` as a subprocess on embedded clusters: what an operator relies on, end to end.

Two clusters, both directions (A->B, B->A): records identical per partition (key, value, headers,
timestamp, order), topic configs copied, checkpoints and translated group offsets for an idle
group, heartbeats, no cycles, live tailing, ``mm2 status`` in both forms, and a clean exit 0 on
SIGTERM. Three clusters (A->B, B->A, A->C): the same data reaches every target, and nothing loops.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from embedded_kafka import KafkaCluster, free_port
from mirror.client.formats import Checkpoint, Heartbeat
from mirror.client.formats import TopicPartition as MirrorTopicPartition
from mirror.connectors.offset_sync_store import OffsetSyncStore
from tests.e2e.mm2_helpers import (
    CHECKPOINTS,
    GROUP_SYNC,
    NEW_TOPICS,
    Mm2Process,
    commit_group,
    eventually,
    group_offsets,
    mirrored_identically,
    mm2_properties,
    mm2_status,
    now_ms,
    status_json,
    write_properties,
)

STARTUP_S = 90.0


def _records(prefix: str, count: int, partitions: int) -> list[dict[str, object]]:
    base = now_ms() - 60_000
    return [
        {
            "key": None if i % 5 == 0 else f"{prefix}-k{i % 4}".encode(),
            "value": f"{prefix} value {i}".encode(),
            "headers": [("h", f"{i}".encode()), ("h", None), ("trace", b"\x00\xff")],
            "timestamp": base + i,
            "partition": i % partitions,
        }
        for i in range(count)
    ]


def _checkpoints(cluster: KafkaCluster, topic: str) -> dict[tuple[str, str, int], Checkpoint]:
    latest: dict[tuple[str, str, int], Checkpoint] = {}
    for msgs in cluster.read_all(topic).values():
        for m in msgs:
            cp = Checkpoint.decode(m.key(), m.value())
            latest[(cp.consumer_group_id, cp.topic_partition.topic, cp.topic_partition.partition)] = cp
    return latest


def _heartbeats(cluster: KafkaCluster, topic: str = "heartbeats") -> set[tuple[str, str]]:
    if topic not in cluster.topic_names():
        return set()
    out: set[tuple[str, str]] = set()
    for msgs in cluster.read_all(topic).values():
        for m in msgs:
            hb = Heartbeat.decode(m.key(), m.value())
            out.add((hb.source_cluster_alias, hb.target_cluster_alias))
    return out


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def _topic_config(cluster: KafkaCluster, topic: str, key: str) -> str | None:
    from confluent_kafka.admin import ConfigResource, ResourceType

    res = ConfigResource(ResourceType.TOPIC, topic)
    admin = cluster.admin()  # keep the client alive until the future completes
    entries = admin.describe_configs([res])[res].result(timeout=10)
    entry = entries.get(key)
    return None if entry is None else str(entry.value)


def test_two_clusters_both_directions(two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path) -> None:
    a, b = two_clusters
    a.create_topic("orders", 3, {"retention.ms": "3600000"})
    b.create_topic("payments", 2)
    a.produce("orders", _records("o", 30, 3))
    b.produce("payments", _records("p", 10, 2))
    # an idle consumer group on A that consumed part of orders: its offsets must reach B, translated
    consumed = {("orders", 0): 4, ("orders", 1): 10, ("orders", 2): 0}
    commit_group(a, "app", consumed)

    port = free_port()
    config = write_properties(
        tmp_path / "mm2.properties",
        mm2_properties(
            {"A": a, "B": b},
            ["A->B", "B->A"],
            **{
                "topics": "orders, payments, probe-.*",
                "dedicated.mode.enable.internal.rest": "true",
                "listeners": f"http://127.0.0.1:{port}",
            },
            **CHECKPOINTS,
            **GROUP_SYNC,
            **NEW_TOPICS,
        ),
    )  # what this test follows within seconds
    mm2 = Mm2Process(config, log_dir=tmp_path)
    try:
        eventually(lambda: mirrored_identically(a, "orders", b, "A.orders"), STARTUP_S, "A.orders on B", mm2)
        eventually(lambda: mirrored_identically(b, "payments", a, "B.payments"), 30, "B.payments on A", mm2)
        assert _topic_config(b, "A.orders", "retention.ms") == "3600000"

        # live tailing: new records keep flowing
        a.produce("orders", _records("live", 9, 3))
        eventually(lambda: mirrored_identically(a, "orders", b, "A.orders", at_least=39), 30, "live records", mm2)

        # checkpoints of the group, and its translated offsets committed on B (never past the source's)
        def checkpoint_rows() -> dict[tuple[str, str, int], Checkpoint] | None:
            if "A.checkpoints.internal" not in b.topic_names():
                return None
            rows = _checkpoints(b, "A.checkpoints.internal")
            return rows if {("app", "A.orders", 0), ("app", "A.orders", 1)} <= set(rows) else None

        rows = eventually(checkpoint_rows, 30, "checkpoints for group app", mm2)
        assert rows is not None
        # The translation the flow's own offset syncs allow, read now, is a floor: a checkpoint is never
        # coarser than the syncs it was computed from, and the task re-emits it as newer syncs arrive (a
        # checkpoint written before the later syncs may still be coarser: wait for the re-emitted one).
        # A.orders was empty, so its offsets equal the source's and the consumed offset is the ceiling.

        def translation_problems() -> list[tuple[int, int | None, Checkpoint]]:
            syncs = OffsetSyncStore()
            syncs.start(False)  # keep the whole history, as the task does for syncs written after it started
            for msgs in a.read_all("mm2-offset-syncs.B.internal").values():
                syncs.on_records((m.key(), m.value()) for m in msgs)
            syncs.mark_read_to_end()
            problems = []
            for (group, topic, partition), cp in _checkpoints(b, "A.checkpoints.internal").items():
                assert group == "app" and topic == "A.orders"
                upstream = consumed[("orders", partition)]
                assert cp.upstream_offset == upstream
                floor = syncs.translate_downstream(group, MirrorTopicPartition("orders", partition), upstream)
                ok = floor is not None and 0 <= floor <= cp.downstream_offset <= upstream
                if upstream > 0:  # the first record's sync (0 -> 0) alone already translates past 0
                    ok = ok and floor is not None and floor >= 1 and cp.downstream_offset >= 1
                if not ok:
                    problems.append((partition, floor, cp))
            return problems

        eventually(lambda: not translation_problems() or None, 30, "checkpoints at least as exact as the syncs", mm2)
        assert translation_problems() == []

        def synced() -> dict[int, int] | None:
            got = group_offsets(b, "app", "A.orders", 3)
            want = {p: cp.downstream_offset for (_, _, p), cp in _checkpoints(b, "A.checkpoints.internal").items()}
            return got if got and all(got.get(p) == o for p, o in want.items() if o > 0) else None

        eventually(synced, 30, "group app offsets synced to B", mm2)

        # heartbeats: each herder writes its own, and each is replicated back the other way
        eventually(lambda: ("A", "B") in _heartbeats(b), 30, "A->B heartbeats on B", mm2)
        eventually(lambda: ("B", "A") in _heartbeats(a), 30, "B->A heartbeats on A", mm2)
        eventually(
            lambda: "B.heartbeats" in a.topic_names() and "A.heartbeats" in b.topic_names(),
            30,
            "remote heartbeat topics",
            mm2,
        )
        # no cycles: B.heartbeats on A and A.heartbeats on B are remote topics the other flow must skip. A new
        # topic on each side, mirrored, proves each flow refreshed its topic list after they existed.
        a.create_topic("probe-a", 1)
        b.create_topic("probe-b", 1)
        eventually(
            lambda: "A.probe-a" in b.topic_names() and "B.probe-b" in a.topic_names(),
            30,
            "a topic refresh of both flows after the remote heartbeat topics appeared",
            mm2,
        )
        assert not any(t.startswith(("A.B.", "B.A.")) for t in a.topic_names() | b.topic_names())

        # status: lag 0 on the data topics, connectors running, the checkpoint of app
        # (heartbeats topics are replicated too and may lag a heartbeat or two: not asserted)
        def caught_up() -> dict[str, Any] | None:
            flows = {f["flow"]: f for f in status_json(config)["flows"]}
            ab, ba = flows["A->B"], flows["B->A"]
            orders = [p for p in ab["partitions"] if p["topic"] == "orders"]
            payments = [p for p in ba["partitions"] if p["topic"] == "payments"]
            states = {c["name"]: c["state"] for c in ab["connectors"]}
            ok = (
                ab["error"] is None
                and ba["error"] is None
                and len(orders) == 3
                and all(p["lag"] == 0 for p in orders)
                and len(payments) == 2
                and all(p["lag"] == 0 for p in payments)
                and states.get("MirrorSourceConnector") == "RUNNING"
                and any(c["group"] == "app" for c in ab["checkpoints"])
            )
            return flows if ok else None

        flows = eventually(caught_up, 30, "mm2 status shows both flows caught up", mm2)
        assert flows is not None
        assert {
            (p["partition"], p["source_end_offset"], p["remote_topic"])
            for p in flows["A->B"]["partitions"]
            if p["topic"] == "orders"
        } == {(0, 13, "A.orders"), (1, 13, "A.orders"), (2, 13, "A.orders")}
        table = mm2_status(config)
        assert table.returncode == 0, table.stderr
        assert "== A->B: total lag" in table.stdout and "== B->A: total lag" in table.stdout
        assert "MirrorSourceConnector" in table.stdout and "A.orders" in table.stdout

        # the Connect REST API of each flow under /{source}/{target}
        base = f"http://127.0.0.1:{port}"
        assert sorted(_get_json(f"{base}/A/B/connectors")) == sorted(
            ["MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector"]
        )
        assert _get_json(f"{base}/B/A/connectors/MirrorSourceConnector/status")["connector"]["state"] == "RUNNING"
        assert _get_json(f"{base}/A/B/connectors/MirrorSourceConnector/config")["source.cluster.alias"] == "A"
        with pytest.raises(urllib.error.HTTPError) as missing:
            _get_json(f"{base}/A/C/connectors")
        assert missing.value.code == 404

        assert mm2.terminate(60) == 0, mm2.output()[-3000:]
        assert "Traceback" not in mm2.output()
    finally:
        mm2.close()


def test_three_clusters(three_clusters: tuple[KafkaCluster, KafkaCluster, KafkaCluster], tmp_path: Path) -> None:
    a, b, c = three_clusters
    a.create_topic("orders", 2)
    b.create_topic("payments", 1)
    a.produce("orders", _records("o", 12, 2))
    b.produce("payments", _records("p", 5, 1))
    config = write_properties(
        tmp_path / "mm2.properties",
        mm2_properties({"A": a, "B": b, "C": c}, ["A->B", "B->A", "A->C"], **{"topics": "orders, payments"}),
    )
    mm2 = Mm2Process(config, log_dir=tmp_path)
    try:
        eventually(lambda: mirrored_identically(a, "orders", b, "A.orders"), STARTUP_S, "A.orders on B", mm2)
        eventually(lambda: mirrored_identically(a, "orders", c, "A.orders"), 60, "A.orders on C", mm2)
        eventually(lambda: mirrored_identically(b, "payments", a, "B.payments"), 60, "B.payments on A", mm2)
        eventually(lambda: ("A", "C") in _heartbeats(c), 30, "A->C heartbeats on C", mm2)
        assert "B.payments" not in c.topic_names()  # B->C is not a flow
        assert not any(t.startswith(("A.B.", "B.A.")) for t in a.topic_names() | b.topic_names())
        flows = {f["flow"]: f for f in status_json(config)["flows"]}
        assert set(flows) == {"A->B", "B->A", "A->C"}
        assert all(f["error"] is None for f in flows.values())
        assert mm2.terminate(60) == 0, mm2.output()[-3000:]
    finally:
        mm2.close()
