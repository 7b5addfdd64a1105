"""KIP-875 on a flow of ``mm2 run``: with ``dedicated.mode.enable.internal.rest = true`` the flow's
herder answers under ``/A/B``; its MirrorSourceConnector is stopped, its offsets read, one partition
PATCHed back, and resumed: the records from the patched offset are copied again (the duplicate set is
counted exactly), and the other partition is not touched."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from embedded_kafka import KafkaCluster, free_port
from tests.e2e.mm2_helpers import Mm2Process, eventually, mm2_properties, write_properties

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(400)]

WAIT_S = 180.0
PER_PARTITION = 20
REWIND = 6
SOURCE = "/A/B/connectors/MirrorSourceConnector"


def _http(port: int, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=90) as response:  # Java's REST request timeout
            payload = response.read()
            return response.status, (json.loads(payload) if payload else None)
    except urllib.error.HTTPError as e:
        payload = e.read()
        return e.code, (json.loads(payload) if payload else None)


def _offsets(topic: str, last: dict[int, int]) -> list[dict[str, Any]]:
    """The flow's source offsets as the REST API shows them (the last record copied, per partition)."""
    return [{"partition": {"cluster": "A", "partition": p, "topic": topic}, "offset": {"offset": o}}
            for p, o in sorted(last.items())]  # fmt: skip


def _sorted(body: Any) -> list[dict[str, Any]]:
    """The offsets by partition, each as Java MirrorMaker writes it: mm2 adds the source topic's id beside
    ``offset`` (docs/source-changes.md), which is checked here and then left out of the comparison."""
    entries = sorted(body["offsets"], key=lambda e: e["partition"]["partition"])
    for entry in entries:
        extra = set(entry["offset"]) - {"offset"}
        assert extra <= {"mm2.topic.id"}, entry
    return [{**e, "offset": {"offset": e["offset"]["offset"]}} for e in entries]


def _values(cluster: KafkaCluster, topic: str) -> dict[int, list[str]]:
    return {p: [bytes(m.value() or b"").decode() for m in msgs] for p, msgs in cluster.read_all(topic, 30).items()}


def test_a_mirror_source_flow_is_stopped_rewound_over_its_rest_namespace_and_copies_again(
    two_clusters: tuple[KafkaCluster, KafkaCluster],
    tmp_path: Path,
    unique_name: Callable[[str], str],
) -> None:
    a, b = two_clusters
    topic = a.create_topic(unique_name("rewind"), partitions=2)
    remote = f"A.{topic}"
    a.produce(topic, [{"value": f"p{p}-{i}", "partition": p} for i in range(PER_PARTITION) for p in range(2)])
    port = free_port()
    config = write_properties(tmp_path / "mm2.properties", mm2_properties(
        {"A": a, "B": b}, ["A->B"], topics=topic,
        **{"dedicated.mode.enable.internal.rest": "true", "listeners": f"http://127.0.0.1:{port}",
           "B.offset.flush.interval.ms": "1000"},  # the offsets GET shows are flushed ones
    ))  # fmt: skip
    once = {p: [f"p{p}-{i}" for i in range(PER_PARTITION)] for p in range(2)}
    caught_up = _offsets(topic, {0: PER_PARTITION - 1, 1: PER_PARTITION - 1})
    mm2 = Mm2Process(config, log_dir=tmp_path)
    try:
        eventually(lambda: remote in b.topic_names() and _values(b, remote) == once, WAIT_S, "the topic mirrored",
                   mm2)  # fmt: skip
        eventually(lambda: _http(port, "GET", f"{SOURCE}/offsets")[0] == 200
                   and _sorted(_http(port, "GET", f"{SOURCE}/offsets")[1]) == caught_up, WAIT_S,
                   "the flow's offsets flushed", mm2)  # fmt: skip

        code, body = _http(port, "PATCH", f"{SOURCE}/offsets", {"offsets": caught_up})
        assert code == 400 and body["message"].startswith("Connectors must be in the STOPPED state"), body
        assert _http(port, "PUT", f"{SOURCE}/stop")[0] == 204
        eventually(lambda: _http(port, "GET", f"{SOURCE}/status")[1]["connector"]["state"] == "STOPPED", WAIT_S,
                   "the source connector STOPPED", mm2)  # fmt: skip
        negative = _offsets(topic, {0: -2})
        code, body = _http(port, "PATCH", f"{SOURCE}/offsets", {"offsets": negative})
        assert code == 400 and "which cannot be negative" in body["message"], body

        # partition 0 resumes after offset PER_PARTITION - REWIND - 1: its last REWIND records again
        rewound = _offsets(topic, {0: PER_PARTITION - REWIND - 1})
        assert _http(port, "PATCH", f"{SOURCE}/offsets", {"offsets": rewound}) == (
            200,
            {"message": "The offsets for this connector have been altered successfully"},
        )
        code, body = _http(port, "GET", f"{SOURCE}/offsets")
        assert code == 200
        assert _sorted(body) == _offsets(topic, {0: PER_PARTITION - REWIND - 1, 1: PER_PARTITION - 1})
        assert _values(b, remote) == once  # nothing copied while stopped
        assert _http(port, "PUT", f"{SOURCE}/resume")[0] == 202

        again = {0: once[0] + [f"p0-{i}" for i in range(PER_PARTITION - REWIND, PER_PARTITION)], 1: once[1]}
        eventually(lambda: _values(b, remote) == again, WAIT_S, "the rewound records copied again", mm2)
        eventually(lambda: _sorted(_http(port, "GET", f"{SOURCE}/offsets")[1]) == caught_up, WAIT_S,
                   "the flow's offsets flushed again", mm2)  # fmt: skip
        assert _values(b, remote) == again  # with every copied record's offset flushed, nothing more comes
        code = mm2.terminate()
        assert code == 0, mm2.output()[-4000:]
        assert "Traceback" not in mm2.output()
    finally:
        mm2.close()
