"""Two ``mm2 run`` processes share a flow (distributed herder, group ``A-mm2`` on B).

SIGKILL of one must lose no record: its tasks move to the survivor, which resumes from the
committed offsets (duplicates allowed only from the window since the last flush): the test reads
those offsets right after the kill and checks that B holds exactly a replay from them.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

from embedded_kafka import KafkaCluster, free_port
from tests.e2e.mm2_helpers import (
    Mm2Process,
    eventually,
    mm2_properties,
    now_ms,
    status_json,
    write_properties,
)

PARTITIONS = 4


def _values(cluster: KafkaCluster, topic: str) -> dict[int, list[bytes]]:
    return {p: [m.value() or b"" for m in msgs] for p, msgs in cluster.read_all(topic).items()}


def _committed_next_offsets(cluster: KafkaCluster) -> dict[int, int]:
    """Partition of ``orders`` -> next offset to replicate, from the flow's committed source offsets."""
    from mirror.driver.status import OffsetFold, read_topic

    fold = OffsetFold("A")
    read_topic({"bootstrap.servers": cluster.bootstrap_servers}, "mm2-offsets.A.internal", fold.apply, 30)
    return {p: o + 1 for (t, p), o in fold.offsets.items() if t == "orders"}


def _first_occurrences(values: list[bytes]) -> list[bytes]:
    seen: set[bytes] = set()
    out: list[bytes] = []
    for v in values:
        if v not in seen:
            seen.add(v)
            out.append(v)
    return out


def test_sigkill_of_one_process_loses_nothing(two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path) -> None:
    a, b = two_clusters
    a.create_topic("orders", PARTITIONS)
    sent = 0
    stop = threading.Event()

    def produce() -> None:
        nonlocal sent
        while not stop.is_set():
            batch = [
                {"value": f"r{sent + i}".encode(), "partition": (sent + i) % PARTITIONS, "timestamp": now_ms()}
                for i in range(8)
            ]
            a.produce("orders", batch)
            sent += len(batch)
            time.sleep(0.2)

    props = mm2_properties(
        {"A": a, "B": b},
        ["A->B"],
        **{
            "topics": "orders",
            "tasks.max": str(PARTITIONS),
            "dedicated.mode.enable.internal.rest": "true",
            # a killed worker's tasks wait this long for it (Java
            # default 5 min), then move to the survivor
            "B.scheduled.rebalance.max.delay.ms": "8000",
            # what this test is about: the survivor resumes from
            # flushed offsets, so flushes happen before the kill
            "B.offset.flush.interval.ms": "500",
        },
    )
    # the same flow settings; each process its own REST listener (followers forward task configs, KIP-710)
    config = write_properties(tmp_path / "mm2.properties", {**props, "listeners": f"http://127.0.0.1:{free_port()}"})
    config2 = write_properties(tmp_path / "mm2-2.properties", {**props, "listeners": f"http://127.0.0.1:{free_port()}"})
    env = {"MM2_HERDER": "distributed"}
    first = Mm2Process(config, log_dir=tmp_path, name="mm2-1", env=env)
    second = Mm2Process(config2, log_dir=tmp_path, name="mm2-2", env=env)
    producer = threading.Thread(target=produce, daemon=True)
    try:
        producer.start()

        def all_flowing() -> bool:
            src, dst = _values(a, "orders"), _values(b, "A.orders") if "A.orders" in b.topic_names() else {}
            return sent > 40 and all(len(dst.get(p, [])) > 5 for p in range(PARTITIONS)) and bool(src)

        eventually(all_flowing, 60, "records flowing on every partition", first)
        assert second.alive(), second.output()[-3000:]
        flow = next(f for f in status_json(config)["flows"] if f["flow"] == "A->B")
        source = next(c for c in flow["connectors"] if c["name"] == "MirrorSourceConnector")
        assert len(source["tasks"]) == PARTITIONS and all(t["state"] == "RUNNING" for t in source["tasks"])

        def source_tasks(proc: Mm2Process) -> set[str]:
            """MirrorSourceConnector tasks in the process's latest assignment (its herder logs each one)."""
            lines = [ln for ln in proc.output().splitlines() if "got assignment:" in ln]
            return set(re.findall(r"MirrorSourceConnector-\d+", lines[-1].split("revoked=")[0])) if lines else set()

        def shared() -> bool:
            mine, theirs = source_tasks(first), source_tasks(second)
            return bool(mine) and bool(theirs) and not mine & theirs and len(mine | theirs) == PARTITIONS

        eventually(shared, 60, "the source tasks split between both processes", first)

        first.proc.kill()  # SIGKILL: no LeaveGroup, no flush
        first.proc.wait(10)
        killed_at = sent
        # The victim commits no more, and its tasks wait scheduled.rebalance.max.delay.ms (8 s) before the
        # survivor takes them over: what is committed now is where the survivor must resume them.
        resume_at = _committed_next_offsets(b)
        eventually(lambda: sent >= killed_at + 48, 30, "records produced after the kill", second)
        stop.set()
        producer.join(10)
        total = sent
        assert total > killed_at

        def complete() -> bool:
            src, dst = _values(a, "orders"), _values(b, "A.orders")
            return all(_first_occurrences(dst.get(p, [])) == src[p] for p in range(PARTITIONS))

        eventually(complete, 90, "every record on B after the SIGKILL", second)
        src, dst = _values(a, "orders"), _values(b, "A.orders")
        # Resumed from the committed offsets: per partition, B holds a first pass over the source up to
        # some k, then everything again from the committed position c <= k, so the only duplicates are
        # src[c:k] (the window since the victim's last flush). A survivor that resumed anywhere else, or
        # lost a record, gives a different sequence.
        assert any(c > 0 for c in resume_at.values()), resume_at  # flushes did happen before the kill
        for p in range(PARTITIONS):
            c = resume_at.get(p, 0)
            k = len(dst[p]) - (len(src[p]) - c)
            assert c <= k <= len(src[p]) and dst[p] == src[p][:k] + src[p][c:], (
                f"partition {p}: not a replay from committed offset {c}: {len(src[p])} source records, "
                f"{len(dst[p])} on B"
            )
        assert second.terminate(60) == 0, second.output()[-3000:]
    finally:
        stop.set()
        first.close()
        second.close()
