"""``mm2 run`` at the default level, as an operator reads it: no client chatter, one warning per outage.

While mirroring normally: no kafka-python connection-lifecycle lines, no raw librdkafka lines.
Then the source cluster goes away: its broker is killed and a stand-in accepts every reconnect and
drops it at once, so the test counts the clients' failed attempts. After many of them (not after
a fixed sleep) exactly one WARNING names the broker, and nothing else was logged at WARNING or above.
"""

from __future__ import annotations

import re
import socket
import struct
import threading
from pathlib import Path

from embedded_kafka import KafkaCluster
from tests.e2e.mm2_helpers import Mm2Process, eventually, mirrored_identically, mm2_properties, write_properties

KAFKA_PYTHON_INFO = re.compile(r" INFO kafka\.")
RAW_LIBRDKAFKA = re.compile(r"^%\d\|", re.M)
FAILED_ATTEMPTS = 30


class DroppingListener:
    """Accepts connections on a port and resets each at once, counting them."""

    def __init__(self, port: int) -> None:
        self.accepted = 0
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", port))
        self._sock.listen(64)
        self._sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # RST on close
            conn.close()
            self.accepted += 1

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._sock.close()


def test_default_level_is_quiet_and_an_unreachable_cluster_is_one_warning(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    a, b = two_clusters
    a.create_topic("orders", 2)
    a.produce("orders", [{"value": f"v{i}".encode(), "partition": i % 2} for i in range(20)])
    props = mm2_properties({"A": a, "B": b}, ["A->B"], topics="orders")
    # A's clients retry quickly, so many failed attempts happen while the test watches
    props["A.reconnect.backoff.ms"] = "100"
    props["A.reconnect.backoff.max.ms"] = "300"
    config = write_properties(tmp_path / "mm2.properties", props)
    mm2 = Mm2Process(config, log_dir=tmp_path)
    listener: DroppingListener | None = None
    try:
        eventually(lambda: mirrored_identically(a, "orders", b, "A.orders"), 120, "orders on B", mm2)
        a.produce("orders", [{"value": f"live{i}".encode(), "partition": i % 2} for i in range(10)])
        eventually(lambda: mirrored_identically(a, "orders", b, "A.orders", at_least=30), 60, "live records", mm2)
        normal = mm2.output()
        assert " INFO mirror.driver.driver: MirrorMaker started" in normal  # the default level is INFO
        assert not KAFKA_PYTHON_INFO.search(normal), normal[-4000:]
        assert not RAW_LIBRDKAFKA.search(normal), normal[-4000:]
        assert " librdkafka: " not in normal, normal[-4000:]  # no client line at all while the clusters answer

        address = a.bootstrap_servers
        port = int(address.rsplit(":", 1)[1])
        a.stop()  # SIGKILL: the source cluster is gone
        listener = DroppingListener(port)
        eventually(
            lambda: listener is not None and listener.accepted >= FAILED_ATTEMPTS,
            90,
            f"{FAILED_ATTEMPTS} failed reconnects to {address}",
            mm2,
        )
        outage = mm2.output()[len(normal) :]
        problems = [line for line in outage.splitlines() if re.search(r" (WARNING|ERROR|CRITICAL) ", line)]
        assert len(problems) == 1, "\n".join(problems)
        assert f"Kafka broker {address} is unreachable" in problems[0], problems[0]
        assert not RAW_LIBRDKAFKA.search(outage) and not KAFKA_PYTHON_INFO.search(outage), outage[-4000:]
    finally:
        if listener is not None:
            listener.close()
        mm2.close()


def test_debug_level_shows_the_client_chatter(two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path) -> None:
    a, b = two_clusters
    a.create_topic("orders", 1)
    a.produce("orders", [b"x", b"y"])
    config = write_properties(tmp_path / "mm2.properties", mm2_properties({"A": a, "B": b}, ["A->B"], topics="orders"))
    mm2 = Mm2Process(config, log_dir=tmp_path, env={"MM2_LOG_LEVEL": "DEBUG"})  # as --log-level DEBUG
    try:
        eventually(lambda: mirrored_identically(a, "orders", b, "A.orders"), 120, "orders on B", mm2)
        out = mm2.output()
        # kafka-python's connection lifecycle, hidden at INFO, is there at DEBUG
        assert re.search(r" DEBUG kafka\.net\.\w+: .*(Connected|Bootstrap complete|Initializing connection)", out), out[
            -4000:
        ]
        assert mm2.terminate(60) == 0, mm2.output()[-3000:]
    finally:
        mm2.close()
