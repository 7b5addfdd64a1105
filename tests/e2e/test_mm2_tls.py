"""Secured clusters as Java users configure them, on the wire: TLS and mutual TLS through stunnel.

Both clusters are reached only through stunnel (tests/tls_brokers.py): A over TLS with a JKS
truststore, B over mutual TLS with a PKCS12 truststore and a PKCS12 keystore, all made by keytool
from certificates the test makes. The mm2.properties is what a Java MirrorMaker would be given.
One ``mm2 run`` and three Spark jobs (backfill, verify, translate-offsets) cover the working path;
the mistakes test runs no Spark and no successful ``mm2 run``. The test broker cannot log anyone in over
SASL (broker-notes.md), so SASL is checked up to the broker's SASL handshake, through TLS.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from embedded_kafka import KafkaCluster
from mirror.client.formats import Checkpoint
from tests.e2e.mm2_helpers import (
    CHECKPOINTS,
    GROUP_SYNC,
    Mm2Process,
    commit_group,
    eventually,
    group_offsets,
    mirrored_identically,
    mm2_command,
    mm2_properties,
    write_properties,
)
from tests.tls_brokers import TlsCluster
from tests.tls_pki import KEYSTORE_PASSWORD, TRUST_PASSWORD, Pki, shared_pki

pytestmark = pytest.mark.e2e

NameFn = Callable[[str], str]
PARTITIONS = 3
BACKLOG = 300  # records before anything runs: the backfill copies them
LIVE = 30  # records written while mm2 run mirrors
STARTUP_S = 90.0


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return shared_pki(tmp_path_factory)


@pytest.fixture
def tls_clusters(pki: Pki, tmp_path: Path) -> Iterator[Callable[..., TlsCluster]]:
    started: list[TlsCluster] = []

    def start(name: str, **kwargs: object) -> TlsCluster:
        cluster = TlsCluster(name, tmp_path, pki, **kwargs)  # type: ignore[arg-type]
        started.append(cluster)
        return cluster.start()

    try:
        yield start
    finally:
        for cluster in started:
            cluster.stop()


def java_tls(alias: str, pki: Pki) -> dict[str, str]:
    """A: TLS with a JKS truststore (Java's default type, not even named)."""
    return {
        f"{alias}.security.protocol": "SSL",
        f"{alias}.ssl.truststore.location": str(pki.truststore_jks),
        f"{alias}.ssl.truststore.password": TRUST_PASSWORD,
    }


def java_mutual_tls(alias: str, pki: Pki) -> dict[str, str]:
    """B: mutual TLS with a PKCS12 truststore and a PKCS12 keystore."""
    return {
        f"{alias}.security.protocol": "SSL",
        f"{alias}.ssl.truststore.type": "PKCS12",
        f"{alias}.ssl.truststore.location": str(pki.truststore_p12),
        f"{alias}.ssl.truststore.password": TRUST_PASSWORD,
        f"{alias}.ssl.keystore.type": "PKCS12",
        f"{alias}.ssl.keystore.location": str(pki.keystore_p12),
        f"{alias}.ssl.keystore.password": KEYSTORE_PASSWORD,
        f"{alias}.ssl.key.password": KEYSTORE_PASSWORD,
    }


def checkpoint_offsets(b: KafkaCluster, groups: set[str]) -> dict[tuple[str, int], int]:
    latest: dict[tuple[str, int], int] = {}
    if "A.checkpoints.internal" in b.topic_names():
        for msgs in b.read_all("A.checkpoints.internal").values():
            for m in msgs:
                cp = Checkpoint.decode(m.key(), m.value())
                if cp.consumer_group_id in groups:
                    latest[(cp.consumer_group_id, cp.topic_partition.partition)] = cp.downstream_offset
    return latest


@pytest.mark.spark
def test_mm2_over_tls_and_mutual_tls_with_java_stores(
    tls_clusters: Callable[..., TlsCluster], pki: Pki, unique_name: NameFn, tmp_path: Path
) -> None:
    a, b = tls_clusters("A"), tls_clusters("B", mutual=True)
    topic = unique_name("orders")
    remote = f"A.{topic}"
    a.create_topic(topic, partitions=PARTITIONS)
    a.produce(
        topic,
        [{"key": f"k{i}".encode(), "value": f"v{i}".encode(), "partition": i % PARTITIONS} for i in range(BACKLOG)],
    )
    synced = unique_name("synced")
    commit_group(a, synced, {(topic, p): 40 + p for p in range(PARTITIONS)})
    props = mm2_properties({"A": a, "B": b}, ["A->B"], topics=topic, **CHECKPOINTS, **GROUP_SYNC)
    props.update(java_tls("A", pki) | java_mutual_tls("B", pki))
    config = write_properties(tmp_path / "mm2.properties", props)

    # 1. the backlog, by the Spark job (its executors build the same clients from the same file)
    backfill = mm2_command(
        "backfill", str(config), "--source", "A", "--target", "B", "--topics", topic, "--master", "local[1]", "--json"
    )
    assert backfill.returncode == 0, backfill.stdout + backfill.stderr
    assert json.loads(backfill.stdout)["totals"]["records_copied"] == BACKLOG

    # 2. mm2 run continues from there: data, checkpoints and group offsets
    proc = Mm2Process(config, log_dir=tmp_path)
    try:
        a.produce(topic, [{"value": f"live{i}".encode(), "partition": i % PARTITIONS} for i in range(LIVE)])
        eventually(
            lambda: mirrored_identically(a, topic, b, remote, at_least=BACKLOG + LIVE) or None,
            STARTUP_S,
            "the topic mirrored over TLS",
            proc,
        )
        exact = {(synced, p): 40 + p for p in range(PARTITIONS)}
        eventually(lambda: checkpoint_offsets(b, {synced}) == exact or None, 60, "checkpoints over TLS", proc)
        eventually(
            lambda: group_offsets(b, synced, remote, PARTITIONS) == {p: 40 + p for p in range(PARTITIONS)} or None,
            60,
            "group offsets synced over mutual TLS",
            proc,
        )

        status = mm2_command("status", str(config), "--json", timeout=90)
        assert status.returncode == 0, status.stdout + status.stderr
        assert "A->B" in status.stdout
    finally:
        assert proc.terminate() == 0, proc.output()[-3000:]
        proc.close()
    assert "Traceback" not in proc.log_path.read_text(errors="replace")

    # 3. verify and translate-offsets --apply against the same file
    verified = mm2_command("verify", str(config), "--source", "A", "--target", "B", "--json", "--master", "local[1]")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    doc = json.loads(verified.stdout)
    assert doc["result"] == "equal" and sum(p["compared"] for p in doc["partitions"]) == BACKLOG + LIVE

    failover = unique_name("failover")
    commit_group(a, failover, {(topic, p): 70 + p for p in range(PARTITIONS)})  # after mm2 stopped
    applied = mm2_command(
        "translate-offsets",
        str(config),
        "--source",
        "A",
        "--target",
        "B",
        "--groups",
        failover,
        "--apply",
        "--json",
        "--master",
        "local[1]",
    )
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert group_offsets(b, failover, remote, PARTITIONS) == {p: 70 + p for p in range(PARTITIONS)}


def _one_error_line(run: object) -> str:
    stderr = run.stderr.strip().splitlines()  # type: ignore[attr-defined]
    assert len(stderr) == 1 and stderr[0].startswith("mm2: error: "), run.stderr  # type: ignore[attr-defined]
    return stderr[0]


def _nothing_written(*clusters: KafkaCluster) -> None:
    for cluster in clusters:
        names = cluster.topic_names()
        assert not [t for t in names if t.endswith(".internal") or t.startswith(("mm2-", "heartbeats"))], names


def test_tls_mistakes_are_one_line_and_write_nothing(
    tls_clusters: Callable[..., TlsCluster], pki: Pki, tmp_path: Path
) -> None:
    a, b = tls_clusters("A"), tls_clusters("B", mutual=True)
    wrong_host = tls_clusters("W", server_cert=pki.wrong_host_cert)
    good = mm2_properties({"A": a, "B": b}, ["A->B"]) | java_tls("A", pki) | java_mutual_tls("B", pki)

    def mm2(command: str, props: dict[str, str], name: str) -> object:
        config = write_properties(tmp_path / f"{name}.properties", props)
        return mm2_command(command, str(config), timeout=120)

    # a wrong truststore password: every command reads the stores first
    wrong_password = good | {"A.ssl.truststore.password": "not-the-password"}
    for command in ("run", "status"):
        run = mm2(command, wrong_password, "wrong-password")
        assert run.returncode == 2 and "A.ssl.truststore.password" in _one_error_line(run)
        assert "not-the-password" not in run.stderr

    # a keystore that does not exist
    run = mm2("run", good | {"B.ssl.keystore.location": str(tmp_path / "absent.p12")}, "missing-store")
    assert run.returncode == 2 and "B.ssl.keystore.location" in _one_error_line(run)

    # a server certificate for another host
    wrong_host_props = mm2_properties({"A": a, "W": wrong_host}, ["A->W"]) | java_tls("A", pki) | java_tls("W", pki)
    run = mm2("run", wrong_host_props, "wrong-host")
    line = _one_error_line(run)
    assert run.returncode == 3 and "cluster 'W'" in line and "mismatch" in line, line

    # no client certificate where mutual TLS requires one
    no_keystore = {k: v for k, v in good.items() if not k.startswith("B.ssl.keystore")}
    no_keystore.pop("B.ssl.key.password")
    run = mm2("run", no_keystore, "no-client-cert")
    line = _one_error_line(run)
    assert run.returncode == 3 and "cluster 'B'" in line and "client certificate" in line, line

    # SASL over TLS: the JAAS reaches the broker's SASL handshake (the test broker logs nobody in), and the
    # failure is the client's own words, without the password
    sasl = good | {
        "A.security.protocol": "SASL_SSL",
        "A.sasl.mechanism": "PLAIN",
        "A.sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="mm2" password="sasl-secret-5";',
    }
    run = mm2("run", sasl, "sasl")
    line = _one_error_line(run)
    assert run.returncode == 3 and "cluster 'A'" in line and "SASL PLAIN" in line and "handshake failed" in line, line
    assert "sasl-secret-5" not in run.stderr + run.stdout

    _nothing_written(a, b, wrong_host)
