"""Two ``mm2 run`` processes share a flow with ``dedicated.mode.enable.internal.rest`` on HTTPS
listeners and basic auth: a leader-only request sent to either process succeeds, so the follower
forwarded it to the leader over HTTPS (verifying its certificate, carrying the credentials), and
records flow with the work split between both."""

from __future__ import annotations

import base64
import json
import re
import ssl
import urllib.error
import urllib.request
from pathlib import Path

import trustme

from embedded_kafka import KafkaCluster, free_port
from tests.e2e.mm2_helpers import Mm2Process, eventually, mm2_properties, now_ms, write_properties

PARTITIONS = 2
AUTH = {"Authorization": "Basic " + base64.b64encode(b"ops:s3cret-pass").decode()}


def call(url: str, method: str, ca: Path, headers: dict[str, str]) -> int:
    req = urllib.request.Request(url, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30, context=ssl.create_default_context(cafile=str(ca))) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as e:
        return e.code


def test_followers_forward_to_the_leader_over_https(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    a, b = two_clusters
    a.create_topic("orders", PARTITIONS)
    ca = trustme.CA()
    ca_pem, server_pem = tmp_path / "ca.pem", tmp_path / "server.pem"
    ca.cert_pem.write_to_path(str(ca_pem))
    ca.issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(str(server_pem))
    creds = tmp_path / "rest-users.properties"
    creds.write_text("ops=s3cret-pass\n")
    props = mm2_properties(
        {"A": a, "B": b},
        ["A->B"],
        **{
            "topics": "orders",
            "tasks.max": str(PARTITIONS),
            "dedicated.mode.enable.internal.rest": "true",
            "listeners.https.ssl.keystore.location": str(server_pem),
            "listeners.https.ssl.keystore.type": "PEM",
            "listeners.https.ssl.truststore.location": str(ca_pem),
            "listeners.https.ssl.truststore.type": "PEM",
            "rest.basic.auth.credentials.file": str(creds),
        },
    )
    ports = [free_port(), free_port()]
    configs = [
        write_properties(tmp_path / f"mm2-{i}.properties", {**props, "listeners": f"https://127.0.0.1:{p}"})
        for i, p in enumerate(ports)
    ]
    env = {"MM2_HERDER": "distributed"}
    procs = [Mm2Process(c, log_dir=tmp_path, name=f"mm2-{i}", env=env) for i, c in enumerate(configs)]
    try:
        a.produce(
            "orders",
            [{"value": f"r{i}".encode(), "partition": i % PARTITIONS, "timestamp": now_ms()} for i in range(20)],
        )

        def assignment(proc: Mm2Process) -> str:
            lines = [ln for ln in proc.output().splitlines() if "got assignment:" in ln]
            return lines[-1].split("revoked=")[0] if lines else ""

        def both_members_work() -> bool:
            return all(re.search(r"Mirror\w+Connector", assignment(p)) for p in procs)

        eventually(both_members_work, 90, "connectors or tasks assigned to both processes", procs[0])
        assert procs[1].alive(), procs[1].output()[-3000:]

        # A restart is leader-only: whichever process is the follower forwards it over HTTPS.
        for port, proc in zip(ports, procs, strict=True):
            url = f"https://127.0.0.1:{port}/A/B/connectors/MirrorSourceConnector/restart"
            eventually(
                lambda url=url: call(url, "POST", ca_pem, AUTH) == 204,
                60,  # type: ignore[misc]
                f"restart answered 204 by {url}",
                proc,
            )
            assert call(url, "POST", ca_pem, {}) == 401
        for proc in procs:
            assert "IO Error trying to forward" not in proc.output()

        def mirrored() -> bool:
            if "A.orders" not in b.topic_names():
                return False
            got = [m.value() for msgs in b.read_all("A.orders").values() for m in msgs]
            return len(set(got)) == 20

        eventually(mirrored, 90, "every record on B", procs[0])
        status_url = f"https://127.0.0.1:{ports[1]}/A/B/connectors/MirrorSourceConnector/status"

        def connector_state() -> str:
            req = urllib.request.Request(status_url, headers=AUTH)
            with urllib.request.urlopen(req, timeout=30, context=ssl.create_default_context(cafile=str(ca_pem))) as r:
                return str(json.loads(r.read())["connector"]["state"])

        # The restart just answered stops the connector (UNASSIGNED) and starts it again (RUNNING); the second
        # process reads both from the status topic a moment later, so its answer is RUNNING only eventually.
        eventually(lambda: connector_state() == "RUNNING", 60, "the connector RUNNING over HTTPS", procs[1])
        for proc in procs:
            assert "s3cret-pass" not in proc.output()
            assert proc.terminate(60) == 0, proc.output()[-3000:]
    finally:
        for proc in procs:
            proc.close()
