"""Two embedded clusters on this host for .ci/container-check, and the checks of what reached B.

    python .ci/container_clusters.py WORKDIR [RECORDS]

Starts clusters A and B (Tansu, from the `embedded` extra of the host's venv), creates topic `orders`
on A (3 partitions) and produces RECORDS records, then writes WORKDIR/clusters.env (A_BOOTSTRAP=...,
B_BOOTSTRAP=...). Then, in order, each step printed as one line on stdout:
  1. waits until B's `A.orders` holds those records (copied by `mm2 backfill` run in the container),
  2. produces RECORDS more records to A,
  3. waits until B holds all of them (mirrored by `mm2 run` in the container) and compares A and B per
     partition (same values, same order: nothing lost, nothing twice), printing `mirrored: ...`.
It then keeps the clusters up until SIGTERM/SIGINT (the container's `mm2 run` still needs them to stop
cleanly), and exits 0 when every check held, 1 otherwise.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from pathlib import Path

from embedded_kafka import EmbeddedKafkaCluster, RecordSpec

TOPIC = "orders"
REMOTE = f"A.{TOPIC}"
PARTITIONS = 3
WAIT_S = 300.0


def say(line: str) -> None:
    print(line, flush=True)


def produce(cluster: EmbeddedKafkaCluster, first: int, count: int) -> None:
    specs: list[RecordSpec] = [
        {"key": f"k{i}".encode(), "value": f"order-{i}".encode(), "partition": i % PARTITIONS}
        for i in range(first, first + count)
    ]
    cluster.produce(TOPIC, specs)


def per_partition(cluster: EmbeddedKafkaCluster, topic: str) -> dict[int, list[bytes | None]]:
    return {p: [m.value() for m in msgs] for p, msgs in cluster.read_all(topic).items()}


def wait_records(b: EmbeddedKafkaCluster, expected: int, stop: threading.Event) -> int:
    """Records in B's remote topic once it holds ``expected`` (or what it holds at the deadline)."""
    deadline = time.monotonic() + WAIT_S
    seen = 0
    while time.monotonic() < deadline and not stop.is_set():
        if REMOTE in b.topic_names():
            seen = sum(len(v) for v in per_partition(b, REMOTE).values())
            if seen >= expected:
                return seen
        stop.wait(2.0)
    return seen


def main(workdir: Path, records: int) -> int:
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    a, b = EmbeddedKafkaCluster("A"), EmbeddedKafkaCluster("B")
    ok = False
    try:
        a.start()
        b.start()
        a.create_topic(TOPIC, partitions=PARTITIONS)
        produce(a, 0, records)
        (workdir / "clusters.env").write_text(f"A_BOOTSTRAP={a.bootstrap_servers}\nB_BOOTSTRAP={b.bootstrap_servers}\n")
        say(f"clusters: A={a.bootstrap_servers} B={b.bootstrap_servers}; {records} records in A's {TOPIC}")
        seen = wait_records(b, records, stop)
        say(f"backfilled: {seen} of {records} records in B's {REMOTE}")
        if seen == records:
            produce(a, records, records)
            say(f"produced: {records} more records to A's {TOPIC}")
            seen = wait_records(b, 2 * records, stop)
            source, target = per_partition(a, TOPIC), per_partition(b, REMOTE)
            ok = source == target
            verdict = "identical per partition" if ok else "NOT identical per partition"
            say(f"mirrored: {seen} of {2 * records} records in B's {REMOTE}, {verdict}")
        while not stop.wait(1.0):
            pass
    finally:
        b.stop()
        a.stop()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 1000))
