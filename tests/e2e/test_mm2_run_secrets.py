"""``mm2 run`` with passwords written literally in mm2.properties: mirroring works, and no password is
found in any topic of either cluster, in the log at DEBUG, in any REST answer or in ``mm2 status``.

The clusters are PLAINTEXT, so the clients ignore the SSL/SASL secrets (librdkafka accepts
``ssl.key.password`` and the ``sasl.username``/``sasl.password`` a PLAIN ``sasl.jaas.config`` turns
into without using them; kafka-python's group client takes them as keyword arguments and ignores
them too): the test sees where the values travel, not whether a broker accepts them.
"""

from __future__ import annotations

import json
import re
import secrets
import urllib.request
from pathlib import Path
from urllib.parse import quote

from embedded_kafka import KafkaCluster, free_port
from tests.e2e.mm2_helpers import (
    Mm2Process,
    commit_group,
    eventually,
    mirrored_identically,
    mm2_properties,
    mm2_status,
    write_properties,
)

CONNECTORS = ("MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector")
UNRESOLVED = ("stay unresolved", "sasl.jaas.config with this login module")  # what an unresolved reference logs


def _jaas(password: str) -> str:
    return f'org.apache.kafka.common.security.plain.PlainLoginModule required username="mm2" password="{password}";'


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as response:
        body: bytes = response.read()
        return body


def _every_record_byte(cluster: KafkaCluster) -> dict[str, bytes]:
    """Topic -> the keys, values and headers of all its records, concatenated."""
    out: dict[str, bytes] = {}
    for topic in sorted(cluster.topic_names()):
        chunks: list[bytes] = []
        for msgs in cluster.read_all(topic).values():
            for m in msgs:
                chunks += [m.key() or b"", m.value() or b""]
                chunks += [k.encode() + (v or b"") for k, v in m.headers() or ()]
        out[topic] = b"\n".join(chunks)
    return out


def test_literal_passwords_never_leave_the_node(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    a, b = two_clusters
    pw = {
        name: f"pw-{name}-{secrets.token_hex(12)}"
        for name in ("a-key", "b-trust", "a-jaas", "b-jaas", "b-admin-sasl", "flow-keystore", "basic-auth")
    }
    a.create_topic("orders", 2)
    a.produce("orders", [{"key": f"k{i}".encode(), "value": f"v{i}".encode(), "partition": i % 2} for i in range(20)])
    commit_group(a, "app", {("orders", 0): 3, ("orders", 1): 2})  # the checkpoint connector gets a task

    port = free_port()
    props = mm2_properties(
        {"A": a, "B": b},
        ["A->B"],
        **{
            "topics": "orders",
            "groups": "app",
            "dedicated.mode.enable.internal.rest": "true",
            "listeners": f"http://127.0.0.1:{port}",
            "A.ssl.key.password": pw["a-key"],
            "B.ssl.truststore.password": pw["b-trust"],
            "A.sasl.jaas.config": _jaas(pw["a-jaas"]),
            "B.sasl.jaas.config": _jaas(pw["b-jaas"]),  # the target's also reaches the herder's group client
            "B.admin.sasl.password": pw["b-admin-sasl"],  # librdkafka's own key: any *.password is a secret
            "A->B.source.consumer.ssl.keystore.password": pw["flow-keystore"],
            "value.converter.basic.auth.user.info": f"user:{pw['basic-auth']}",  # a worker-level secret
        },
    )
    config = write_properties(tmp_path / "mm2.properties", props)
    mm2 = Mm2Process(config, log_dir=tmp_path, env={"MM2_LOG_LEVEL": "DEBUG"})
    base = f"http://127.0.0.1:{port}/A/B"
    try:
        eventually(lambda: mirrored_identically(a, "orders", b, "A.orders"), 120, "A.orders on B", mm2)

        def tasks_of_every_connector() -> bool:
            return all(json.loads(_get(f"{base}/connectors/{c}/tasks")) for c in CONNECTORS)

        eventually(tasks_of_every_connector, 60, "tasks of all three connectors", mm2)

        # the stored configs carry references to the mm2.properties keys instead of the values
        topics = {
            **{f"A:{t}": v for t, v in _every_record_byte(a).items()},
            **{f"B:{t}": v for t, v in _every_record_byte(b).items()},
        }
        stored = topics["B:mm2-configs.A.internal"]
        assert b"${mm2:A.ssl.key.password}" in stored and b"${mm2:B.sasl.jaas.config}" in stored
        assert b"${mm2:A->B.source.consumer.ssl.keystore.password}" in stored
        assert b'"task.class"' in stored  # task configs are stored there too (they carry the references)
        assert {
            "A:mm2-offset-syncs.B.internal",
            "B:mm2-status.A.internal",
            "B:mm2-offsets.A.internal",
            "B:A.checkpoints.internal",
            "B:heartbeats",
        } <= set(topics)

        answers: dict[str, bytes] = {}
        for path in ("/connectors?expand=info&expand=status", "/connectors"):
            answers[path] = _get(base + path)
        for name in CONNECTORS:
            for tail in ("", "/config", "/status", "/tasks", "/topics", "/offsets"):
                path = f"/connectors/{quote(name)}{tail}"
                answers[path] = _get(base + path)
        assert b"${mm2:A.ssl.key.password}" in answers["/connectors/MirrorSourceConnector/config"]

        status_runs = [mm2_status(config), mm2_status(config, "--json")]
        assert all(r.returncode == 0 for r in status_runs), [r.stderr for r in status_runs]
        assert "MirrorSourceConnector" in status_runs[0].stdout

        assert mm2.terminate(60) == 0, mm2.output()[-3000:]
        log = mm2.output()
        assert " DEBUG " in log and "Traceback" not in log
        # the connectors' clients got the real values: an unresolved ${mm2:...} jaas config would be refused
        assert not [w for w in UNRESOLVED if w in log]

        leaks: list[tuple[str, str]] = []
        for secret in pw.values():
            token = secret.encode()
            leaks += [(f"topic {t}", secret) for t, data in topics.items() if token in data]
            leaks += [(f"REST {p}", secret) for p, body in answers.items() if token in body]
            leaks += [("mm2 status", secret) for r in status_runs if secret in r.stdout + r.stderr]
            leaks += [("log", secret) for _ in [0] if secret in log]
        assert leaks == [], leaks
    finally:
        mm2.close()


def _source_side_work(proc: Mm2Process) -> set[str]:
    """Connectors and tasks of the process's latest assignment that open clients on A (its herder logs
    each one): the source and checkpoint connectors and their tasks, not the heartbeat's."""
    lines = [ln for ln in proc.output().splitlines() if "got assignment:" in ln]
    latest = lines[-1].split("revoked=")[0] if lines else ""
    return set(re.findall(r"Mirror(?:Source|Checkpoint)Connector(?:-\d+)?", latest))


def test_each_node_resolves_from_its_own_file(two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path) -> None:
    """Two processes, files at different paths holding different passwords under the same keys."""
    a, b = two_clusters
    a.create_topic("orders", 2)
    a.produce("orders", [{"value": f"v{i}".encode(), "partition": i % 2} for i in range(10)])
    # With a group to checkpoint there are four tasks (two source, one checkpoint, one heartbeat) and
    # three connectors: however the leader balances them, each process gets work that connects to A.
    commit_group(a, "app", {("orders", 0): 2})
    common = mm2_properties(
        {"A": a, "B": b},
        ["A->B"],
        **{"topics": "orders", "groups": "app", "tasks.max": "2", "dedicated.mode.enable.internal.rest": "true"},
    )
    nodes: list[Mm2Process] = []
    passwords: list[str] = []
    try:
        for n in (1, 2):
            key_pw, jaas_pw = (f"pw-node{n}-{secrets.token_hex(12)}" for _ in range(2))
            passwords += [key_pw, jaas_pw]
            folder = tmp_path / f"node{n}"
            folder.mkdir()
            config = write_properties(
                folder / "mm2.properties",
                {
                    **common,
                    "listeners": f"http://127.0.0.1:{free_port()}",
                    "A.ssl.key.password": key_pw,
                    "A.sasl.jaas.config": _jaas(jaas_pw),
                },
            )
            nodes.append(Mm2Process(config, log_dir=folder, name=f"mm2-{n}", env={"MM2_LOG_LEVEL": "DEBUG"}))

        def shared() -> bool:
            one, two = _source_side_work(nodes[0]), _source_side_work(nodes[1])
            return bool(one) and bool(two) and {"MirrorSourceConnector-0", "MirrorSourceConnector-1"} <= one | two

        eventually(shared, 90, "work on A's clients assigned to both processes", nodes[0])
        eventually(lambda: mirrored_identically(a, "orders", b, "A.orders"), 60, "A.orders on B", nodes[1])
        stored = b.read_all("mm2-configs.A.internal")
        source_configs = [m for msgs in stored.values() for m in msgs if m.key() == b"connector-MirrorSourceConnector"]
        assert len(source_configs) == 1  # the same configs from both files: no node rewrote the other's
        assert b"${mm2:A.sasl.jaas.config}" in (source_configs[0].value() or b"")
        topics = {
            **{f"A:{t}": v for t, v in _every_record_byte(a).items()},
            **{f"B:{t}": v for t, v in _every_record_byte(b).items()},
        }
        for node in nodes:
            assert node.terminate(60) == 0, node.output()[-3000:]
        logs = {f"log of mm2-{i + 1}": node.output() for i, node in enumerate(nodes)}
        assert not [(name, w) for name, log in logs.items() for w in UNRESOLVED if w in log]
        places = {**topics, **{name: log.encode() for name, log in logs.items()}}
        leaks = [(where, pw) for pw in passwords for where, data in places.items() if pw.encode() in data]
        assert leaks == [], leaks
    finally:
        for node in nodes:
            node.close()
